// ThreadHeap<T>: a per-thread object kept on the heap and reached through
// one pointer of thread-local storage. libcuda.so.1 is often dlopen()ed
// (cudart, cuda-python), and glibc gives a library loaded so only a small
// surplus of static TLS, shared with every other such library: a larger TLS
// block makes dlopen fail ("cannot allocate memory in static TLS block").
// Per-thread state bigger than a few words goes here. The object is made on
// the thread's first get() and destroyed when the thread exits. It has
// cache lines of its own: a neighbour on the heap that another thread
// writes would otherwise cost its owner a line transfer per access.
#pragma once

namespace cucpu {

template <class T>
class ThreadHeap {
 public:
  T& get() {
    if (!p_) [[unlikely]] p_ = new Lines();
    return p_->value;
  }
  // The object, or null before the thread's first get().
  T* peek() const { return p_ ? &p_->value : nullptr; }
  ~ThreadHeap() { delete p_; }

 private:
  struct alignas(64) Lines {  // its size is a multiple of 64: nothing shares its lines
    T value{};
  };
  Lines* p_ = nullptr;
};

}  // namespace cucpu
