// PTX text -> Module: a recursive-descent parser over the lexer's tokens.
//
// Contract: never reads past the text, caps brace nesting, and reports the
// first error as "line L, column C: reason". Directives the compiler has no
// use for (.file, .loc, .section, .pragma, debug sections) are skipped.
// Instructions are kept generic (opcode, suffixes, operands): the lowering
// decides what each means and refuses what it does not know.
#include <cstring>

#include "ptx/parser_impl.h"

namespace cucpu::ptx {

using detail::Parser;

bool parse_module(std::string_view text, Module* out, std::string* error) {
  try {
    Parser p(text, out);
    p.module();
    out->global_slot.assign(out->vars.size(), -1);
    int slots = 0;
    for (size_t i = 0; i < out->vars.size(); ++i)
      if (backed_by_memory(out->vars[i])) out->global_slot[i] = slots++;
    return true;
  } catch (const ParseError& e) {
    if (error) *error = "line " + std::to_string(e.line) + ", column " + std::to_string(e.col) + ": " + e.what;
    return false;
  } catch (const std::bad_alloc&) {
    if (error) *error = "line 1, column 1: out of memory while parsing";
    return false;
  }
}

}  // namespace cucpu::ptx
