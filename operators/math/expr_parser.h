// The expression language of `op: math`: a small recursive-descent parser into a tree whose nodes
// remember their column, so every later error (unknown name, type, broadcast) can point at it.
//
//   expr       := comparison
//   comparison := additive [("==" | "!=" | "<" | "<=" | ">" | ">=") additive]   (no chains)
//   additive   := term {("+" | "-") term}
//   term       := unary {("*" | "/" | "//" | "%") unary}
//   unary      := ("-" | "+") unary | power
//   power      := primary ["**" unary]                  (right-associative: -2**2 is -4)
//   primary    := number | name | name "(" expr {"," expr} ")" | "(" expr ")"
//   number     := digits ["." digits] [("e" | "E") ["+" | "-"] digits] | "." digits [...]
//   name       := [A-Za-z_][A-Za-z0-9_]*
//
// Integer literals are int32 (int64 when they do not fit), literals with "." or an exponent are
// float32 (DALI's constants). Nesting is limited to kMaxExprDepth levels and the tree to
// kMaxExprNodes nodes: a pathological string is an error, never a stack overflow.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

namespace conveyor::ops {

inline constexpr int kMaxExprDepth = 64;
inline constexpr size_t kMaxExprNodes = 256;

struct ExprNode {
  enum class Kind { kInt, kFloat, kName, kUnary, kBinary, kCall };
  Kind kind = Kind::kInt;
  int column = 1;        // 1-based position of the node's token in the source
  std::string text;      // the name, the function, or the operator ("+", "//", "-" for unary minus)
  int64_t int_value = 0;
  double float_value = 0;
  std::vector<int> args;  // indices into ExprTree::nodes
};

struct ExprTree {
  std::string source;
  std::vector<ExprNode> nodes;
  int root = -1;
  const ExprNode& at(int i) const { return nodes[static_cast<size_t>(i)]; }
};

// An error in an expression: what() is `at column 7 of "(x - ) * 2": expected an operand, got ")"`.
class ExprError : public InvalidArgument {
 public:
  ExprError(const std::string& source, int column, const std::string& detail);
  int column() const { return column_; }
  const std::string& detail() const { return detail_; }

 private:
  int column_;
  std::string detail_;
};

// Throws ExprError.
ExprTree ParseExpression(const std::string& source);

}  // namespace conveyor::ops
