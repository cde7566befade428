// File: mapped_allocator.h
// Layer: kairos_activity. An allocator for stores that reserve their whole bound up front as
// address space only: an anonymous private mapping (MAP_NORESERVE) whose pages the kernel
// supplies, zeroed, on first touch. A std::vector using it and reserving its maximum once never
// reallocates, so it never copies what it holds and never faults the same data in twice,
// while its resident memory still follows use.
// Threading: stateless.
#ifndef KAIROS_SRC_ACTIVITY_MAPPED_ALLOCATOR_H_
#define KAIROS_SRC_ACTIVITY_MAPPED_ALLOCATOR_H_

#include <sys/mman.h>

#include <cstddef>
#include <new>

namespace kairos::internal {

template <typename T>
struct MappedAllocator {
  using value_type = T;
  MappedAllocator() = default;
  template <typename U>
  MappedAllocator(const MappedAllocator<U>&) {}  // NOLINT: allocator rebinding

  T* allocate(size_t n) {
    if (n == 0) n = 1;
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    void* p = mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (p != nullptr) munmap(p, (n == 0 ? 1 : n) * sizeof(T));
  }
};

template <typename T, typename U>
bool operator==(const MappedAllocator<T>&, const MappedAllocator<U>&) { return true; }
template <typename T, typename U>
bool operator!=(const MappedAllocator<T>&, const MappedAllocator<U>&) { return false; }

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_MAPPED_ALLOCATOR_H_
