#include "ptx/link_units.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "ptx/lexer.h"

namespace cucpu::ptx {
namespace {

struct Range {
  size_t begin, end;
};

// What one unit declares at module scope, and where its header lies.
struct UnitScan {
  std::vector<Tok> tokens;
  std::vector<Range> header;               // byte ranges of its header directives
  std::set<std::string, std::less<>> internal;  // names defined without linkage
  std::set<std::string, std::less<>> all;       // every module-scope name
  int version = 0;                          // major * 10 + minor
  int sm = 0;
  std::string target;                       // the .target line's words, as written
};

int sm_of(std::string_view word) {
  if (word.substr(0, 3) != "sm_") return 0;
  return std::atoi(std::string(word.substr(3)).c_str());
}

UnitScan scan(const std::string& text) {
  UnitScan u;
  Lexer lx(text);
  for (Tok t = lx.next(); t.kind != Tok::kEnd; t = lx.next()) u.tokens.push_back(t);
  const std::vector<Tok>& tk = u.tokens;
  auto offset = [&](const Tok& t) { return static_cast<size_t>(t.text.data() - text.data()); };
  int depth = 0;
  bool linkage = false;
  for (size_t i = 0; i < tk.size(); ++i) {
    const Tok& t = tk[i];
    if (t.kind == Tok::kPunct) {
      if (t.punct == '{') ++depth;
      if (t.punct == '}' && --depth == 0) linkage = false;
      if (t.punct == ';' && depth == 0) linkage = false;
      continue;
    }
    if (depth != 0 || t.kind != Tok::kDirective) continue;
    const std::string_view d = t.text;
    if (d == ".version" || d == ".address_size" || d == ".target") {
      size_t j = i + 1;
      while (j < tk.size() && tk[j].line == t.line) ++j;  // the directive runs to the end of its line
      if (d == ".version" && i + 1 < j) {
        const std::string_view v = tk[i + 1].text;
        const size_t dot = v.find('.');
        u.version = std::atoi(std::string(v.substr(0, dot)).c_str()) * 10 +
                    (dot == std::string_view::npos ? 0 : std::atoi(std::string(v.substr(dot + 1)).c_str()));
      }
      if (d == ".target") {
        u.target.clear();
        for (size_t k = i + 1; k < j; ++k) {
          u.target += tk[k].text;
          if (tk[k].kind == Tok::kWord) u.sm = std::max(u.sm, sm_of(tk[k].text));
        }
      }
      u.header.push_back({offset(t), j < tk.size() ? offset(tk[j]) : text.size()});
      i = j - 1;
      continue;
    }
    if (d == ".visible" || d == ".extern" || d == ".weak" || d == ".common") {
      linkage = true;
      continue;
    }
    size_t j = i + 1;
    if (d == ".func" || d == ".entry") {
      if (j < tk.size() && tk[j].kind == Tok::kPunct && tk[j].punct == '(') {
        int parens = 0;
        for (; j < tk.size(); ++j) {
          if (tk[j].kind == Tok::kPunct && tk[j].punct == '(') ++parens;
          if (tk[j].kind == Tok::kPunct && tk[j].punct == ')' && --parens == 0) break;
        }
        ++j;
      }
    } else if (d != ".global" && d != ".const" && d != ".shared") {
      continue;
    }
    while (j < tk.size() && tk[j].kind != Tok::kWord) ++j;  // past .align 4, types, vector widths
    if (j == tk.size()) break;
    const std::string name(tk[j].text);
    u.all.insert(name);
    if (!linkage && d != ".entry") u.internal.insert(name);
    i = j;
  }
  return u;
}

}  // namespace

std::string join_units(const std::vector<std::string>& units) {
  std::vector<UnitScan> scans;
  scans.reserve(units.size());
  for (const std::string& text : units) scans.push_back(scan(text));
  size_t newest = 0;
  int version = 0;
  for (size_t i = 0; i < scans.size(); ++i) {
    version = std::max(version, scans[i].version);
    if (scans[i].sm > scans[newest].sm) newest = i;
  }
  std::string out = ".version " + std::to_string(version / 10) + "." + std::to_string(version % 10) + "\n";
  out += ".target " + (scans.empty() || scans[newest].target.empty() ? std::string("sm_90") : scans[newest].target);
  out += "\n.address_size 64\n";
  for (size_t u = 0; u < units.size(); ++u) {
    const std::string& text = units[u];
    const UnitScan& s = scans[u];
    std::map<std::string, std::string, std::less<>> renames;
    for (const std::string& name : s.internal) {
      bool elsewhere = false;
      for (size_t v = 0; v < scans.size() && !elsewhere; ++v) elsewhere = v != u && scans[v].all.count(name);
      if (elsewhere) renames[name] = name + "$unit" + std::to_string(u);
    }
    size_t at = 0;
    size_t next_header = 0;
    out += "\n// unit " + std::to_string(u) + "\n";
    for (const Tok& t : s.tokens) {
      const size_t b = static_cast<size_t>(t.text.data() - text.data());
      if (b < at) continue;
      if (next_header < s.header.size() && b >= s.header[next_header].begin) {
        out.append(text, at, s.header[next_header].begin - at);
        at = s.header[next_header].end;
        ++next_header;
        continue;
      }
      if (t.kind != Tok::kWord) continue;
      auto it = renames.find(t.text);
      if (it == renames.end()) continue;
      out.append(text, at, b - at);
      out += it->second;
      at = b + t.text.size();
    }
    if (at < text.size()) out.append(text, at, std::string::npos);
    while (!out.empty() && out.back() == '\0') out.pop_back();
    out += '\n';
  }
  return out;
}

}  // namespace cucpu::ptx
