// SmallVec<T, N>: a vector of trivially copyable T that keeps its first N
// elements inline (graph nodes: most have one or two edges, and capture adds
// a node per operation, so a heap allocation per edge list would dominate).
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>

namespace cucpu {

template <class T, size_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  SmallVec() = default;
  SmallVec(const SmallVec& o) { assign(o.begin(), o.end()); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) {
      size_ = 0;
      assign(o.begin(), o.end());
    }
    return *this;
  }
  ~SmallVec() = default;

  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  void clear() { size_ = 0; }

  void push_back(const T& v) {
    if (size_ == capacity()) grow(capacity() * 2);
    data()[size_++] = v;
  }
  // Removes the element at `it`, keeping the order of the rest.
  T* erase(T* it) {
    std::memmove(it, it + 1, static_cast<size_t>(end() - it - 1) * sizeof(T));
    --size_;
    return it;
  }
  bool operator==(const SmallVec& o) const {
    return size_ == o.size_ && std::memcmp(data(), o.data(), size_ * sizeof(T)) == 0;
  }

 private:
  size_t capacity() const { return heap_ ? heap_cap_ : N; }
  void grow(size_t cap) {
    std::unique_ptr<T[]> next(new T[cap]);
    std::memcpy(next.get(), data(), size_ * sizeof(T));
    heap_ = std::move(next);
    heap_cap_ = cap;
  }
  void assign(const T* b, const T* e) {
    for (; b != e; ++b) push_back(*b);
  }

  T inline_[N];
  std::unique_ptr<T[]> heap_;
  size_t heap_cap_ = 0;
  size_t size_ = 0;
};

}  // namespace cucpu
