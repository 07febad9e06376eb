// The runtime's own machine code, mapped at cuInit: otherwise the first
// call of each kind (a process's first capture, its first instantiate)
// takes page faults on the library's text, each costing about as much as
// a hundred captured nodes (the kernel maps a window of pages from the page
// cache). Mapping the runtime's part of the text, about 2 MB, costs some
// 0.15 ms once; LLVM's text, used only when a module is compiled, is left
// to fault in as usual.
#pragma once

namespace cucpu::api {

// Called once, by the cuInit that initializes the library.
void prefault_own_code();

}  // namespace cucpu::api
