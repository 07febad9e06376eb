// The PTX lexer: words (opcodes with their dot suffixes, names, registers),
// directives, numbers, strings and punctuation, with line and column.
#pragma once

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace cucpu::ptx {


struct Tok {
  enum Kind { kEnd, kWord, kDirective, kInt, kFloat, kString, kPunct } kind = kEnd;
  std::string_view text;
  int line = 1, col = 1;
  uint64_t ival = 0;
  bool int_overflow = false;
  double fval = 0;
  uint64_t fbits = 0;
  int fwidth = 0;  // 32 for 0f, 64 for 0d, 0 decimal
  char punct = 0;
};

struct ParseError {
  int line, col;
  std::string what;
};

inline bool word_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%'; }
inline bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; }

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  Tok next() {
    skip_space();
    Tok t;
    t.line = line_;
    t.col = static_cast<int>(pos_ - line_start_) + 1;
    if (pos_ >= s_.size()) return t;
    const size_t b = pos_;
    const char c = s_[pos_];
    if (c == '.' && pos_ + 1 < s_.size() && word_start(s_[pos_ + 1])) {
      ++pos_;
      while (pos_ < s_.size() && (word_char(s_[pos_]) && s_[pos_] != '.')) ++pos_;
      t.kind = Tok::kDirective;
    } else if (word_start(c)) {
      // A word may carry dot suffixes and "::" qualifiers: ld.global.L1::evict_last.u32.
      ++pos_;
      while (pos_ < s_.size()) {
        if (word_char(s_[pos_])) ++pos_;
        else if (s_[pos_] == ':' && pos_ + 2 < s_.size() + 1 && pos_ + 1 < s_.size() && s_[pos_ + 1] == ':') pos_ += 2;
        else break;
      }
      t.kind = Tok::kWord;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && pos_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1])))) {
      lex_number(t);
    } else if (c == '"') {
      ++pos_;
      while (pos_ < s_.size() && s_[pos_] != '"' && s_[pos_] != '\n') {
        if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
        ++pos_;
      }
      if (pos_ >= s_.size() || s_[pos_] != '"') throw ParseError{t.line, t.col, "unterminated string"};
      ++pos_;
      t.kind = Tok::kString;
    } else {
      ++pos_;
      t.kind = Tok::kPunct;
      t.punct = c;
    }
    t.text = s_.substr(b, pos_ - b);
    return t;
  }

  // Skips the rest of the current line (.loc and .file take no semicolon).
  void skip_line() {
    while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
  }
  int line() const { return line_; }

 private:
  void skip_space() {
    for (;;) {
      while (pos_ < s_.size() && (std::isspace(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '\0')) {
        if (s_[pos_] == '\n') newline();
        ++pos_;
      }
      if (pos_ + 1 < s_.size() && s_[pos_] == '/' && s_[pos_ + 1] == '/') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
        continue;
      }
      if (pos_ + 1 < s_.size() && s_[pos_] == '/' && s_[pos_ + 1] == '*') {
        pos_ += 2;
        while (pos_ + 1 < s_.size() && !(s_[pos_] == '*' && s_[pos_ + 1] == '/')) {
          if (s_[pos_] == '\n') newline();
          ++pos_;
        }
        pos_ = pos_ + 2 <= s_.size() ? pos_ + 2 : s_.size();
        continue;
      }
      return;
    }
  }
  void newline() {
    ++line_;
    line_start_ = pos_ + 1;
  }

  static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  void lex_number(Tok& t) {
    const size_t b = pos_;
    auto at = [&](size_t i) { return i < s_.size() ? s_[i] : '\0'; };
    if (at(pos_) == '0' && (at(pos_ + 1) == 'f' || at(pos_ + 1) == 'F' || at(pos_ + 1) == 'd' || at(pos_ + 1) == 'D') &&
        hexval(at(pos_ + 2)) >= 0) {
      const int digits = (at(pos_ + 1) == 'f' || at(pos_ + 1) == 'F') ? 8 : 16;
      pos_ += 2;
      uint64_t v = 0;
      int n = 0;
      while (hexval(at(pos_)) >= 0) {
        v = v << 4 | static_cast<uint64_t>(hexval(at(pos_)));
        ++pos_;
        ++n;
      }
      if (n != digits) throw ParseError{t.line, t.col, "a hexadecimal float literal needs exactly " + std::to_string(digits) + " digits"};
      t.kind = Tok::kFloat;
      t.fbits = v;
      t.fwidth = digits == 8 ? 32 : 64;
      return;
    }
    if (at(pos_) == '0' && (at(pos_ + 1) == 'x' || at(pos_ + 1) == 'X')) {
      pos_ += 2;
      uint64_t v = 0;
      if (hexval(at(pos_)) < 0) throw ParseError{t.line, t.col, "malformed hexadecimal literal"};
      while (hexval(at(pos_)) >= 0) {
        if (v >> 60) t.int_overflow = true;
        v = v << 4 | static_cast<uint64_t>(hexval(at(pos_)));
        ++pos_;
      }
      if (at(pos_) == 'U') ++pos_;
      t.kind = Tok::kInt;
      t.ival = v;
      return;
    }
    if (at(pos_) == '0' && (at(pos_ + 1) == 'b' || at(pos_ + 1) == 'B') && (at(pos_ + 2) == '0' || at(pos_ + 2) == '1')) {
      pos_ += 2;
      uint64_t v = 0;
      while (at(pos_) == '0' || at(pos_) == '1') {
        if (v >> 63) t.int_overflow = true;
        v = v << 1 | static_cast<uint64_t>(at(pos_) - '0');
        ++pos_;
      }
      if (at(pos_) == 'U') ++pos_;
      t.kind = Tok::kInt;
      t.ival = v;
      return;
    }
    // Decimal integer, octal (leading 0), or decimal float.
    size_t e = pos_;
    bool is_float = false;
    while (std::isdigit(static_cast<unsigned char>(at(e)))) ++e;
    if (at(e) == '.' && std::isdigit(static_cast<unsigned char>(at(e + 1)))) {
      is_float = true;
      ++e;
      while (std::isdigit(static_cast<unsigned char>(at(e)))) ++e;
    }
    if ((at(e) == 'e' || at(e) == 'E') &&
        (std::isdigit(static_cast<unsigned char>(at(e + 1))) ||
         ((at(e + 1) == '-' || at(e + 1) == '+') && std::isdigit(static_cast<unsigned char>(at(e + 2)))))) {
      is_float = true;
      e += 2;
      while (std::isdigit(static_cast<unsigned char>(at(e)))) ++e;
    }
    if (is_float) {
      t.kind = Tok::kFloat;
      t.fval = std::strtod(std::string(s_.substr(b, e - b)).c_str(), nullptr);
      pos_ = e;
      return;
    }
    const bool octal = at(pos_) == '0' && e > pos_ + 1;
    uint64_t v = 0;
    for (size_t i = pos_; i < e; ++i) {
      const uint64_t d = static_cast<uint64_t>(s_[i] - '0');
      if (octal && d > 7) throw ParseError{t.line, t.col, "malformed octal literal"};
      const uint64_t base = octal ? 8 : 10;
      if (v > (UINT64_MAX - d) / base) t.int_overflow = true;
      v = v * base + d;
    }
    pos_ = e;
    if (at(pos_) == 'U') ++pos_;
    t.kind = Tok::kInt;
    t.ival = v;
  }

  std::string_view s_;
  size_t pos_ = 0;
  size_t line_start_ = 0;
  int line_ = 1;
};


}  // namespace cucpu::ptx
