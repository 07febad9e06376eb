// PTX text -> Module: a recursive-descent parser over the lexer's tokens.
//
// Contract: never reads past the text, caps brace nesting, and reports the
// first error as "line L, column C: reason". Directives the compiler has no
// use for (.file, .loc, .section, .pragma, debug sections) are skipped.
// Instructions are kept generic (opcode, suffixes, operands): the lowering
// decides what each means and refuses what it does not know.
#include <cstring>

#include "ptx/ast.h"
#include "ptx/lexer.h"

namespace cucpu::ptx {

namespace {

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
  [[noreturn]] void fail(const Tok& t, const std::string& why) { throw ParseError{t.line, t.col, why}; }
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
    while (is_dir(".extern") || is_dir(".visible") || is_dir(".weak") || is_dir(".common")) {
      if (is_dir(".extern")) is_extern = true;
      else visible = true;
      advance();
    }
    if (is_dir(".entry") || is_dir(".func")) return function(is_extern, visible);
    if (is_dir(".alias")) fail(tok_, ".alias is not supported");
    if (is_dir(".global") || is_dir(".const") || is_dir(".shared") || is_dir(".local")) {
      VarDecl v = variable(is_extern, visible);
      if (v.space == Space::kLocal) fail(tok_, "module-scope .local variables are not supported");
      if (m_->var_index.count(v.name)) fail(tok_, "duplicate variable '" + v.name + "'");
      m_->var_index[v.name] = static_cast<int>(m_->vars.size());
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
      if (prev.has_body && f.has_body) fail(tok_, "duplicate function '" + f.name + "'");
      if (f.has_body) prev = std::move(f);  // a definition replaces a forward declaration
      return;
    }
    m_->func_index[f.name] = static_cast<int>(m_->funcs.size());
    m_->funcs.push_back(std::move(f));
  }

  // Names in a body: registers and variables, with nested scopes.
  struct Scope {
    std::vector<std::pair<std::string, int>> regs;  // (name, previous index or -1)
    std::vector<std::pair<std::string, std::string>> vars;  // (name, previous renaming)
  };

  void body(Function& f) {
    f_ = &f;
    reg_names_.clear();
    var_names_.clear();
    scopes_.clear();
    for (size_t i = 0; i < f.params.size(); ++i)
      if (f.params[i].space == Space::kReg) declare_reg(f.params[i].name, f.params[i].ty, 1);
    for (size_t i = 0; i < f.rets.size(); ++i)
      if (f.rets[i].space == Space::kReg) declare_reg(f.rets[i].name, f.rets[i].ty, 1);
    block(0);
    f_ = nullptr;
  }

  void declare_reg(const std::string& name, Ty ty, int vec) {
    RegDecl r{name, ty, vec};
    const int idx = static_cast<int>(f_->regs.size());
    f_->regs.push_back(r);
    auto it = reg_names_.find(name);
    const int prev = it == reg_names_.end() ? -1 : it->second;
    if (!scopes_.empty()) scopes_.back().regs.push_back({name, prev});
    reg_names_[name] = idx;
  }

  void block(int depth) {
    if (depth > kMaxNesting) fail(tok_, "blocks nested too deeply");
    expect('{');
    scopes_.emplace_back();
    while (!is_punct('}')) {
      if (tok_.kind == Tok::kEnd) fail(tok_, "unterminated function body");
      statement(depth);
    }
    advance();
    Scope s = std::move(scopes_.back());
    scopes_.pop_back();
    for (auto it = s.regs.rbegin(); it != s.regs.rend(); ++it) {
      if (it->second < 0) reg_names_.erase(it->first);
      else reg_names_[it->first] = it->second;
    }
    for (auto it = s.vars.rbegin(); it != s.vars.rend(); ++it) {
      if (it->second.empty()) var_names_.erase(it->first);
      else var_names_[it->first] = it->second;
    }
  }

  void statement(int depth) {
    if (is_punct('{')) return block(depth + 1);
    if (tok_.kind == Tok::kDirective) {
      const std::string_view d = tok_.text;
      if (d == ".reg") return reg_decl();
      if (d == ".local" || d == ".shared" || d == ".param" || d == ".const" || d == ".global") {
        VarDecl v = variable(false, false);
        if (v.space == Space::kGlobal || v.space == Space::kConst) fail(tok_, "function-scope .global/.const variables are not supported");
        // Body variables get unique names (call sequences redeclare param0 in each scope).
        std::string unique = v.name + "$" + std::to_string(f_->vars.size());
        auto it = var_names_.find(v.name);
        scopes_.back().vars.push_back({v.name, it == var_names_.end() ? std::string() : it->second});
        var_names_[v.name] = unique;
        v.name = unique;
        f_->vars.push_back(std::move(v));
        return;
      }
      if (d == ".loc" || d == ".file") return skip_line_directive();
      if (d == ".callprototype" || d == ".calltargets" || d == ".branchtargets") {
        // Labelled declarations for indirect calls and branches: calls need
        // no prototype here (every function has one calling convention).
        while (!is_punct(';') && tok_.kind != Tok::kEnd) advance();
        expect(';');
        return;
      }
      if (d == ".pragma") {
        while (!is_punct(';') && tok_.kind != Tok::kEnd) advance();
        expect(';');
        return;
      }
      fail(tok_, "unexpected directive '" + std::string(d) + "' in a function body");
    }
    if (tok_.kind == Tok::kWord) {
      // A label?
      const Tok t = tok_;
      std::string w(tok_.text);
      advance();
      if (is_punct(':')) {
        advance();
        if (f_->labels.count(w)) fail(t, "duplicate label '" + w + "'");
        f_->labels[w] = static_cast<int>(f_->body.size());
        return;
      }
      return instruction(t, w, -1, false);
    }
    if (is_punct('@')) {
      advance();
      bool neg = false;
      if (is_punct('!')) {
        neg = true;
        advance();
      }
      const Tok pt = tok_;
      const int p = reg_ref(word(), pt);
      if (f_->regs[static_cast<size_t>(p)].ty != Ty::kPred) fail(pt, "a guard must be a predicate");
      const Tok t = tok_;
      return instruction(t, word(), p, neg);
    }
    fail(tok_, "expected an instruction, found '" + std::string(tok_.text) + "'");
  }

  void reg_decl() {
    advance();
    int vec = 1;
    if (is_dir(".v2") || is_dir(".v4")) {
      vec = tok_.text[2] - '0';
      advance();
    }
    const Ty ty = type_directive();
    for (;;) {
      const Tok t = tok_;
      std::string name = word();
      if (is_punct('<')) {
        advance();
        const uint64_t n = integer();
        if (n > 1000000) fail(t, "too many registers");
        expect('>');
        for (uint64_t i = 0; i < n; ++i) declare_reg(name + std::to_string(i), ty, vec);
      } else {
        declare_reg(name, ty, vec);
      }
      if (!is_punct(',')) break;
      advance();
    }
    expect(';');
  }

  int reg_ref(const std::string& name, const Tok& t) {
    auto it = reg_names_.find(name);
    if (it == reg_names_.end()) fail(t, "undeclared register '" + name + "'");
    return it->second;
  }

  std::string symbol_name(const std::string& w) {
    auto it = var_names_.find(w);
    return it == var_names_.end() ? w : it->second;
  }

  void instruction(const Tok& t, const std::string& w, int guard, bool neg) {
    Instr in;
    in.line = t.line;
    in.col = t.col;
    in.guard = guard;
    in.guard_neg = neg;
    size_t dot = w.find('.');
    in.op = w.substr(0, dot);
    while (dot != std::string::npos) {
      const size_t next = w.find('.', dot + 1);
      in.mods.push_back(w.substr(dot + 1, next == std::string::npos ? std::string::npos : next - dot - 1));
      if (in.mods.back().empty()) fail(t, "empty instruction suffix");
      dot = next;
    }
    if (!is_punct(';'))
      for (;;) {
        in.args.push_back(operand(0));
        if (!is_punct(',')) break;
        advance();
      }
    expect(';');
    f_->body.push_back(std::move(in));
  }

  Operand operand(int depth) {
    if (depth > 4) fail(tok_, "operand nested too deeply");
    Operand o;
    const Tok t = tok_;
    if (is_punct('[')) {
      advance();
      o.kind = Operand::Kind::kAddr;
      if (tok_.kind == Tok::kWord) {
        std::string w = word();
        if (reg_names_.count(w)) o.reg = reg_ref(w, t);
        else o.sym = symbol_name(w);
      } else {
        o.imm = static_cast<int64_t>(integer());
      }
      while (is_punct('+') || is_punct('-')) {
        const bool minus = is_punct('-');
        advance();
        const uint64_t v = integer();
        // Offsets wrap as address arithmetic does (no signed overflow).
        o.imm = static_cast<int64_t>(static_cast<uint64_t>(o.imm) + (minus ? ~v + 1 : v));
      }
      expect(']');
      return o;
    }
    if (is_punct('{')) {
      advance();
      o.kind = Operand::Kind::kVec;
      for (;;) {
        o.elems.push_back(operand(depth + 1));
        if (!is_punct(',')) break;
        advance();
      }
      expect('}');
      return o;
    }
    if (is_punct('(')) {
      advance();
      o.kind = Operand::Kind::kList;
      if (!is_punct(')'))
        for (;;) {
          o.elems.push_back(operand(depth + 1));
          if (!is_punct(',')) break;
          advance();
        }
      expect(')');
      return o;
    }
    if (is_punct('!')) {
      advance();
      o = operand(depth + 1);
      if (o.kind != Operand::Kind::kReg) fail(t, "'!' applies to a predicate register");
      o.neg = true;
      return o;
    }
    if (tok_.kind == Tok::kFloat) {
      o.kind = Operand::Kind::kFloat;
      o.fbits = tok_.fbits;
      o.fwidth = tok_.fwidth;
      o.fvalue = tok_.fval;
      advance();
      return o;
    }
    if (tok_.kind == Tok::kInt || is_punct('-')) {
      if (is_punct('-')) {
        advance();
        if (tok_.kind == Tok::kFloat) {
          o = operand(depth + 1);
          if (o.fwidth == 0) o.fvalue = -o.fvalue;
          else o.fbits ^= o.fwidth == 32 ? 0x80000000ull : 0x8000000000000000ull;
          return o;
        }
        o.kind = Operand::Kind::kImm;
        o.imm = static_cast<int64_t>(~integer() + 1);  // two's complement: -2^63 stays itself
        return o;
      }
      o.kind = Operand::Kind::kImm;
      o.imm = static_cast<int64_t>(integer());
      return o;
    }
    if (tok_.kind == Tok::kWord) {
      std::string w = word();
      if (w == "_") {
        o.kind = Operand::Kind::kSink;
        if (is_punct('|')) {
          advance();
          const Tok pt = tok_;
          o.pair = reg_ref(word(), pt);
        }
        return o;
      }
      if (w[0] == '%' || reg_names_.count(w)) {
        auto it = reg_names_.find(w);
        if (it != reg_names_.end()) {
          o.kind = Operand::Kind::kReg;
          o.reg = it->second;
        } else {
          special(w, t, o);
        }
        if (is_punct('|')) {
          advance();
          const Tok pt = tok_;
          o.pair = reg_ref(word(), pt);
        }
        return o;
      }
      o.kind = Operand::Kind::kSym;
      o.sym = symbol_name(w);
      return o;
    }
    fail(t, "unexpected '" + std::string(t.text) + "' in an operand");
  }

  void special(const std::string& w, const Tok& t, Operand& o) {
    std::string base = w, comp;
    const size_t dot = w.find('.');
    if (dot != std::string::npos) {
      base = w.substr(0, dot);
      comp = w.substr(dot + 1);
    }
    bool has_comp = false;
    if (!special_register(base, &o.sreg, &has_comp)) fail(t, "undeclared register '" + w + "'");
    o.kind = Operand::Kind::kSpecial;
    if (o.sreg == SReg::kEnvReg || o.sreg == SReg::kPm) return;
    if (has_comp) {
      if (comp == "x") o.comp = 0;
      else if (comp == "y") o.comp = 1;
      else if (comp == "z") o.comp = 2;
      else fail(t, "special register '" + w + "' needs .x, .y or .z");
    } else if (!comp.empty()) {
      fail(t, "unknown special register '" + w + "'");
    }
  }

  Lexer lex_;
  Module* m_;
  Tok tok_;
  Function* f_ = nullptr;
  std::unordered_map<std::string, int> reg_names_;
  std::unordered_map<std::string, std::string> var_names_;
  std::vector<Scope> scopes_;
};

}  // namespace

bool parse_module(std::string_view text, Module* out, std::string* error) {
  try {
    Parser p(text, out);
    p.module();
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
