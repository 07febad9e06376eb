// ThreadHeap<T>: a per-thread object kept on the heap and reached through
// one pointer of thread-local storage. libcuda.so.1 is often dlopen()ed
// (cudart, cuda-python), and glibc gives a library loaded so only a small
// surplus of static TLS, shared with every other such library: a larger TLS
// block makes dlopen fail ("cannot allocate memory in static TLS block").
// Per-thread state bigger than a few words goes here. The object is made on
// the thread's first get() and destroyed when the thread exits.
#pragma once

namespace cucpu {

template <class T>
class ThreadHeap {
 public:
  T& get() {
    if (!p_) [[unlikely]] p_ = new T();
    return *p_;
  }
  // The object, or null before the thread's first get().
  T* peek() const { return p_; }
  ~ThreadHeap() { delete p_; }

 private:
  T* p_ = nullptr;
};

}  // namespace cucpu
