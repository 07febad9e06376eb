// Code addresses to source positions, for the reports a user reads
// (cucpu check): the function, and its file and line where the module has
// line tables, read by LLVM's symbolizer from the module's own debug
// information. A leaf: it imports base alone.
#pragma once

#include <string>

namespace cucpu::symbols {

// Where the frame whose return address is `pc` stands, as
//   "function at file:line (module)"   where the module has line tables,
//   "function+0xoff (module)"          where it has symbols only,
//   "module+0xoff"                     where it has neither (the offset is
//                                      what addr2line -e module takes),
//   "0xaddress"                        outside every module.
// Any thread may call it; the first call for a module reads its debug
// information (once per module), so callers are reports, never fast paths.
std::string describe_return_address(const void* pc);

}  // namespace cucpu::symbols
