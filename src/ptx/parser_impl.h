// The PTX parser's class, shared by parser.cpp (entry), this header's
// inline members (directives, variables, functions) and parser_body.cpp
// (function bodies: statements, registers, instructions, operands).
// Internal to src/ptx.
#pragma once

#include <cstring>
#include <set>

#include "ptx/ast.h"
#include "ptx/lexer.h"

namespace cucpu::ptx::detail {

constexpr int kMaxNesting = 64;
constexpr uint64_t kMaxVarBytes = uint64_t{1} << 32;

class Parser {
 public:
  Parser(std::string_view text, Module* m) : lex_(text), m_(m) { advance(); }

  void module() {
    while (tok_.kind != Tok::kEnd) top_level();
    if (m_->version_major == 0) fail(tok_, "missing .version directive");
  }

 private:
  // Inside a function body the error names the function, as the compiler's do.
  [[noreturn]] void fail(const Tok& t, const std::string& why) {
    throw ParseError{t.line, t.col, f_ && !f_->name.empty() ? why + " (in '" + f_->name + "')" : why};
  }
  void advance() { tok_ = lex_.next(); }
  bool is_punct(char c) const { return tok_.kind == Tok::kPunct && tok_.punct == c; }
  bool is_dir(std::string_view d) const { return tok_.kind == Tok::kDirective && tok_.text == d; }
  void expect(char c) {
    if (!is_punct(c)) fail(tok_, std::string("expected '") + c + "', found '" + std::string(tok_.text) + "'");
    advance();
  }
  std::string word() {
    if (tok_.kind != Tok::kWord) fail(tok_, "expected a name, found '" + std::string(tok_.text) + "'");
    std::string w(tok_.text);
    advance();
    return w;
  }
  uint64_t integer() {
    bool neg = false;
    if (is_punct('-')) {
      neg = true;
      advance();
    }
    if (tok_.kind != Tok::kInt) fail(tok_, "expected an integer, found '" + std::string(tok_.text) + "'");
    if (tok_.int_overflow) fail(tok_, "integer literal out of range");
    uint64_t v = tok_.ival;
    advance();
    return neg ? ~v + 1 : v;
  }
  void skip_balanced_braces() {
    int depth = 0;
    do {
      if (tok_.kind == Tok::kEnd) fail(tok_, "unterminated section");
      if (is_punct('{')) ++depth;
      if (is_punct('}')) --depth;
      advance();
    } while (depth > 0);
  }
  // .loc, .file: the rest of the line.
  void skip_line_directive() {
    const int line = tok_.line;
    lex_.skip_line();
    advance();
    (void)line;
  }

  void top_level() {
    if (tok_.kind != Tok::kDirective) fail(tok_, "expected a directive, found '" + std::string(tok_.text) + "'");
    const std::string_view d = tok_.text;
    if (d == ".version") {
      advance();
      if (tok_.kind == Tok::kFloat) {
        const std::string t(tok_.text);
        const auto dot = t.find('.');
        m_->version_major = std::atoi(t.c_str());
        m_->version_minor = dot == std::string::npos ? 0 : std::atoi(t.c_str() + dot + 1);
        advance();
      } else {
        m_->version_major = static_cast<int>(integer());
      }
      if (m_->version_major < 1 || m_->version_major > 99) fail(tok_, "malformed PTX ISA version");
      return;
    }
    if (d == ".target") {
      advance();
      for (;;) {
        const Tok t = tok_;
        std::string w = word();
        if (w.rfind("sm_", 0) == 0 || w.rfind("compute_", 0) == 0) {
          const char* digits = w.c_str() + (w[0] == 's' ? 3 : 8);
          m_->target_sm = std::atoi(digits);
          if (m_->target_sm <= 0) fail(t, "malformed target '" + w + "'");
          m_->target_mods.push_back(w);
        } else {
          m_->target_mods.push_back(w);
        }
        if (!is_punct(',')) break;
        advance();
      }
      return;
    }
    if (d == ".address_size") {
      advance();
      m_->address_size = static_cast<int>(integer());
      if (m_->address_size != 64 && m_->address_size != 32) fail(tok_, "address size must be 32 or 64");
      if (m_->address_size != 64) fail(tok_, ".address_size 32 is not supported (cucpu runs 64-bit code only)");
      return;
    }
    if (d == ".file" || d == ".loc") return skip_line_directive();
    if (d == ".section") {
      advance();
      while (!is_punct('{') && tok_.kind != Tok::kEnd) advance();
      return skip_balanced_braces();
    }
    if (d == ".pragma") {
      while (!is_punct(';') && tok_.kind != Tok::kEnd) advance();
      expect(';');
      return;
    }
    // Linkage, then a variable or a function.
    bool is_extern = false, visible = false;
    weak_ = false;
    while (is_dir(".extern") || is_dir(".visible") || is_dir(".weak") || is_dir(".common")) {
      if (is_dir(".extern")) is_extern = true;
      else visible = true;
      if (is_dir(".weak") || is_dir(".common")) weak_ = true;
      advance();
    }
    if (is_dir(".entry") || is_dir(".func")) return function(is_extern, visible);
    if (is_dir(".alias")) fail(tok_, ".alias is not supported");
    if (is_dir(".global") || is_dir(".const") || is_dir(".shared") || is_dir(".local")) {
      VarDecl v = variable(is_extern, visible);
      if (v.space == Space::kLocal) fail(tok_, "module-scope .local variables are not supported");
      auto it = m_->var_index.find(v.name);
      if (it != m_->var_index.end()) {
        // Joined units (-rdc): an .extern declaration and the definition it
        // names are one variable, whichever comes first.
        VarDecl& prev = m_->vars[static_cast<size_t>(it->second)];
        if (v.is_extern && prev.space == v.space) return;
        if (prev.is_extern && prev.space == v.space) {
          prev = std::move(v);
          if (weak_) weak_names_.insert(prev.name);
          return;
        }
        // Joined units: .weak and .common definitions of one name are one
        // variable (the first, or the unit's strong definition).
        if (prev.space == v.space && (weak_ || weak_names_.count(v.name))) {
          if (!weak_) {
            prev = std::move(v);
            weak_names_.erase(prev.name);
          }
          return;
        }
        fail(tok_, "duplicate variable '" + v.name + "'");
      }
      m_->var_index[v.name] = static_cast<int>(m_->vars.size());
      if (weak_) weak_names_.insert(v.name);
      m_->vars.push_back(std::move(v));
      return;
    }
    fail(tok_, "unexpected directive '" + std::string(d) + "'");
  }

  Space space_of(std::string_view d) {
    if (d == ".global") return Space::kGlobal;
    if (d == ".const") return Space::kConst;
    if (d == ".shared") return Space::kShared;
    if (d == ".local") return Space::kLocal;
    if (d == ".param") return Space::kParam;
    if (d == ".reg") return Space::kReg;
    fail(tok_, "expected a state space");
  }

  Ty type_directive() {
    if (tok_.kind != Tok::kDirective) fail(tok_, "expected a type");
    const Ty t = type_from_name(tok_.text.substr(1));
    if (t == Ty::kNone) fail(tok_, "unknown type '" + std::string(tok_.text) + "'");
    advance();
    return t;
  }

  // [.space] [.attribute(...)] [.align N] [.vN] [.ptr ...] .type name [dims] [= init] ;
  VarDecl variable(bool is_extern, bool visible, bool terminated = true) {
    VarDecl v;
    v.is_extern = is_extern;
    v.visible = visible;
    v.space = space_of(tok_.text);
    advance();
    int vec = 1;
    for (;;) {
      if (is_dir(".attribute")) {
        advance();
        expect('(');
        while (!is_punct(')')) {
          if (tok_.kind == Tok::kEnd) fail(tok_, "unterminated .attribute");
          if (is_dir(".managed")) v.managed = true;
          advance();
        }
        expect(')');
      } else if (is_dir(".align")) {
        advance();
        const uint64_t a = integer();
        if (a == 0 || (a & (a - 1)) || a > 4096) fail(tok_, "alignment must be a power of two up to 4096");
        v.align = static_cast<uint32_t>(a);
      } else if (is_dir(".v2") || is_dir(".v4") || is_dir(".v8")) {
        vec = tok_.text[2] - '0';
        advance();
      } else if (is_dir(".ptr") || is_dir(".global") || is_dir(".shared") || is_dir(".const") || is_dir(".local")) {
        advance();  // pointer attributes of kernel parameters
      } else {
        break;
      }
    }
    v.ty = type_directive();
    // A kernel pointer parameter's attributes, after its type:
    // `.ptr [.space] [.align N]`, describing the memory it points to.
    if (is_dir(".ptr")) {
      advance();
      if (is_dir(".global") || is_dir(".shared") || is_dir(".const") || is_dir(".local")) advance();
      if (is_dir(".align")) {
        advance();
        const uint64_t a = integer();
        if (a == 0 || (a & (a - 1))) fail(tok_, "alignment must be a power of two");
      }
    }
    const Tok name_tok = tok_;
    v.name = word();
    const uint64_t elem = static_cast<uint64_t>(type_bits(v.ty) == 1 ? 1 : type_bits(v.ty) / 8) * vec;
    uint64_t count = 1;
    while (is_punct('[')) {
      advance();
      if (is_punct(']')) {
        v.unsized = true;
        advance();
        continue;
      }
      const uint64_t n = integer();
      if (n == 0 || count > kMaxVarBytes / n) fail(name_tok, "array size out of range");
      count *= n;
      expect(']');
    }
    if (elem == 0 || count > kMaxVarBytes / elem) fail(name_tok, "variable too large");
    v.size = v.unsized ? 0 : count * elem;
    if (!v.align) v.align = static_cast<uint32_t>(elem > 16 ? 16 : elem);
    if (is_punct('=')) {
      advance();
      v.init.reserve(static_cast<size_t>(std::min<uint64_t>(v.size, 1 << 20)));
      uint64_t offset = 0;
      initializer(v, elem / vec, offset, 0);
      if (offset > v.size && !v.unsized) fail(name_tok, "initializer larger than the variable");
      if (v.unsized) v.size = offset;
    }
    if (terminated) expect(';');
    return v;
  }

  void initializer(VarDecl& v, uint64_t elem, uint64_t& offset, int depth) {
    if (depth > kMaxNesting) fail(tok_, "initializer nested too deeply");
    if (is_punct('{')) {
      advance();
      if (!is_punct('}'))
        for (;;) {
          initializer(v, elem, offset, depth + 1);
          if (!is_punct(',')) break;
          advance();
        }
      expect('}');
      return;
    }
    if (offset + elem > kMaxVarBytes) fail(tok_, "initializer too large");
    v.init.resize(static_cast<size_t>(offset + elem), 0);
    uint8_t* at = v.init.data() + offset;
    if (tok_.kind == Tok::kWord) {
      // An address: sym, sym+N, generic(sym).
      std::string w = word();
      if (w == "generic") {
        expect('(');
        w = word();
        expect(')');
      }
      int64_t addend = 0;
      if (is_punct('+')) {
        advance();
        addend = static_cast<int64_t>(integer());
      }
      if (elem != 8) fail(tok_, "an address initializer needs a 64-bit element");
      v.sym_inits.push_back({offset, w + "+" + std::to_string(addend)});
    } else if (tok_.kind == Tok::kFloat || (is_punct('-') && false)) {
      double d = tok_.fval;
      uint64_t bits = tok_.fbits;
      const int width = tok_.fwidth;
      advance();
      if (width == 0) {
        if (elem == 4) {
          float f = static_cast<float>(d);
          std::memcpy(at, &f, 4);
        } else if (elem == 8) {
          std::memcpy(at, &d, 8);
        } else {
          fail(tok_, "a float initializer needs a 32- or 64-bit element");
        }
      } else if (width == 32 && elem == 8) {
        float f;
        uint32_t b32 = static_cast<uint32_t>(bits);
        std::memcpy(&f, &b32, 4);
        double dd = f;
        std::memcpy(at, &dd, 8);
      } else {
        std::memcpy(at, &bits, static_cast<size_t>(std::min<uint64_t>(elem, 8)));
      }
    } else {
      const uint64_t x = integer();
      std::memcpy(at, &x, static_cast<size_t>(std::min<uint64_t>(elem, 8)));
    }
    offset += elem;
  }

  void param_list(std::vector<ParamDecl>& out) {
    expect('(');
    if (!is_punct(')'))
      for (;;) {
        if (!is_dir(".param") && !is_dir(".reg")) fail(tok_, "expected .param or .reg");
        VarDecl v = variable(false, false, false);
        ParamDecl p;
        p.name = v.name;
        p.ty = v.ty;
        p.space = v.space;
        p.align = v.align;
        p.size = v.size;
        if (v.unsized) fail(tok_, "a parameter needs a size");
        out.push_back(std::move(p));
        if (!is_punct(',')) break;
        advance();
      }
    expect(')');
  }

  void function(bool is_extern, bool visible) {
    Function f;
    f.is_entry = is_dir(".entry");
    f.is_extern = is_extern;
    f.visible = visible;
    f.line = tok_.line;
    advance();
    if (!f.is_entry && is_punct('(')) param_list(f.rets);
    f.name = word();
    if (is_punct('(')) param_list(f.params);
    for (;;) {
      const Tok t = tok_;
      if (is_dir(".maxntid") || is_dir(".reqntid")) {
        uint32_t* dims = is_dir(".maxntid") ? f.maxntid : f.reqntid;
        advance();
        for (int i = 0; i < 3; ++i) {
          const uint64_t n = integer();
          if (n == 0 || n > 1024) fail(t, "thread count out of range");
          dims[i] = static_cast<uint32_t>(n);
          if (!is_punct(',')) break;
          advance();
        }
        for (int i = 0; i < 3; ++i)
          if (!dims[i]) dims[i] = 1;
      } else if (is_dir(".minnctapersm") || is_dir(".maxnctapersm") || is_dir(".maxnreg") ||
                 is_dir(".maxclusterrank")) {
        const bool min = is_dir(".minnctapersm"), nreg = is_dir(".maxnreg");
        advance();
        const uint64_t n = integer();
        if (min) f.minnctapersm = static_cast<uint32_t>(n);
        if (nreg) f.maxnreg = static_cast<uint32_t>(n);
      } else if (is_dir(".reqnctapercluster") || is_dir(".explicitcluster")) {
        advance();
        while (tok_.kind == Tok::kInt || is_punct(',')) advance();
      } else if (is_dir(".noreturn")) {
        f.noreturn = true;
        advance();
      } else if (is_dir(".pragma")) {
        while (!is_punct(';') && tok_.kind != Tok::kEnd) advance();
        expect(';');
      } else if (is_dir(".abi_preserve") || is_dir(".abi_preserve_control")) {
        advance();
        integer();
      } else {
        break;
      }
    }
    if (is_punct(';')) {
      advance();
    } else {
      f.has_body = true;
      body(f);
    }
    auto it = m_->func_index.find(f.name);
    if (it != m_->func_index.end()) {
      Function& prev = m_->funcs[static_cast<size_t>(it->second)];
      if (prev.has_body && f.has_body) {
        // Joined units: each may define the same .weak function (a
        // template instance); one definition stands, a strong one if any.
        if (!weak_ && !weak_names_.count(f.name)) fail(tok_, "duplicate function '" + f.name + "'");
        if (!weak_) {
          weak_names_.erase(f.name);
          prev = std::move(f);
        }
        return;
      }
      if (f.has_body) {  // a definition replaces a forward declaration
        if (weak_) weak_names_.insert(f.name);
        prev = std::move(f);
      }
      return;
    }
    if (weak_ && f.has_body) weak_names_.insert(f.name);
    m_->func_index[f.name] = static_cast<int>(m_->funcs.size());
    m_->funcs.push_back(std::move(f));
  }

  // Names in a body: registers and variables, with nested scopes.
  struct Scope {
    std::vector<std::pair<std::string, int>> regs;  // (name, previous index or -1)
    std::vector<std::pair<std::string, std::string>> vars;  // (name, previous renaming)
  };

  void body(Function& f);
  void declare_reg(const std::string& name, Ty ty, int vec);
  void block(int depth);
  void statement(int depth);
  void reg_decl();
  int reg_ref(const std::string& name, const Tok& t);
  std::string symbol_name(const std::string& w);
  void instruction(const Tok& t, const std::string& w, int guard, bool neg);
  Operand operand(int depth);
  void special(const std::string& w, const Tok& t, Operand& o);
  bool vector_element(const std::string& w, Operand& o);
  bool video_selector(const std::string& w, const Tok& t, Operand& o);
  Lexer lex_;
  Module* m_;
  Tok tok_;
  Function* f_ = nullptr;
  std::unordered_map<std::string, int> reg_names_;
  // Module-scope linkage: whether the definition being parsed is .weak or
  // .common, and the names whose standing definition is.
  bool weak_ = false;
  std::set<std::string> weak_names_;
  std::unordered_map<std::string, std::string> var_names_;
  std::vector<Scope> scopes_;
};

}  // namespace cucpu::ptx::detail
