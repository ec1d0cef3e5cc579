#include "operators/math/expr_parser.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace conveyor::ops {

ExprError::ExprError(const std::string& source, int column, const std::string& detail)
    : InvalidArgument("at column " + std::to_string(column) + " of \"" + source + "\": " + detail),
      column_(column),
      detail_(detail) {}

namespace {

struct Token {
  enum class Kind { kNumber, kName, kSymbol, kEnd };
  Kind kind = Kind::kEnd;
  std::string text;
  int column = 1;
};

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

class Tokenizer {
 public:
  explicit Tokenizer(const std::string& s) : s_(s) {}

  std::vector<Token> Run() {
    std::vector<Token> tokens;
    while (true) {
      while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      const int column = static_cast<int>(pos_) + 1;
      if (pos_ == s_.size()) {
        tokens.push_back({Token::Kind::kEnd, "", column});
        return tokens;
      }
      const char c = s_[pos_];
      if (IsDigit(c) || (c == '.' && pos_ + 1 < s_.size() && IsDigit(s_[pos_ + 1]))) {
        tokens.push_back({Token::Kind::kNumber, Number(column), column});
      } else if (IsNameStart(c)) {
        const size_t begin = pos_;
        while (pos_ < s_.size() && IsNameChar(s_[pos_])) ++pos_;
        tokens.push_back({Token::Kind::kName, s_.substr(begin, pos_ - begin), column});
      } else {
        tokens.push_back({Token::Kind::kSymbol, Symbol(column), column});
      }
    }
  }

 private:
  std::string Number(int column) {
    const size_t begin = pos_;
    while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (pos_ == s_.size() || !IsDigit(s_[pos_])) {
        throw ExprError(s_, column, "number \"" + s_.substr(begin, pos_ - begin) + "\": expected digits after the exponent");
      }
      while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
    }
    if (pos_ < s_.size() && IsNameChar(s_[pos_])) {
      throw ExprError(s_, static_cast<int>(pos_) + 1,
                      "unexpected '" + std::string(1, s_[pos_]) + "' after the number \"" + s_.substr(begin, pos_ - begin) + "\"");
    }
    return s_.substr(begin, pos_ - begin);
  }

  std::string Symbol(int column) {
    static const char* const kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const char* two : kTwo) {
      if (s_.compare(pos_, 2, two) == 0) {
        pos_ += 2;
        return two;
      }
    }
    const char c = s_[pos_];
    if (std::string("+-*/%()<>,").find(c) == std::string::npos) {
      throw ExprError(s_, column, "unexpected character '" + std::string(1, c) +
                                      "'; expected a number, a name, ( ) , or one of + - * / // % ** == != < <= > >=");
    }
    ++pos_;
    return std::string(1, c);
  }

  const std::string& s_;
  size_t pos_ = 0;
};

class Parser {
 public:
  Parser(const std::string& source, std::vector<Token> tokens) : tokens_(std::move(tokens)) { tree_.source = source; }

  ExprTree Run() {
    if (Peek().kind == Token::Kind::kEnd) throw Error(Peek(), "the expression is empty");
    tree_.root = Comparison();
    if (Peek().kind != Token::Kind::kEnd) {
      const Token& t = Peek();
      throw Error(t, "expected an operator or the end of the expression, got " + Describe(t));
    }
    return std::move(tree_);
  }

 private:
  const Token& Peek() const { return tokens_[next_]; }
  Token Take() { return tokens_[next_++]; }
  bool At(const char* symbol) const { return Peek().kind == Token::Kind::kSymbol && Peek().text == symbol; }
  ExprError Error(const Token& t, const std::string& detail) const { return ExprError(tree_.source, t.column, detail); }
  static std::string Describe(const Token& t) {
    return t.kind == Token::Kind::kEnd ? "the end of the expression" : "\"" + t.text + "\"";
  }

  int Add(ExprNode node) {
    if (tree_.nodes.size() == kMaxExprNodes) {
      throw ExprError(tree_.source, node.column,
                      "the expression has more than " + std::to_string(kMaxExprNodes) + " numbers, names and operators");
    }
    tree_.nodes.push_back(std::move(node));
    return static_cast<int>(tree_.nodes.size()) - 1;
  }
  int Binary(const Token& op, int lhs, int rhs) {
    ExprNode n;
    n.kind = ExprNode::Kind::kBinary;
    n.column = op.column;
    n.text = op.text;
    n.args = {lhs, rhs};
    return Add(std::move(n));
  }

  // Depth guard for every recursive entry.
  struct Nest {
    Nest(Parser& p, const Token& t) : p_(p) {
      if (++p_.depth_ > kMaxExprDepth) {
        throw p_.Error(t, "the expression nests deeper than " + std::to_string(kMaxExprDepth) + " levels");
      }
    }
    ~Nest() { --p_.depth_; }
    Parser& p_;
  };

  int Comparison() {
    const Nest nest(*this, Peek());
    int lhs = Additive();
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (!At(op)) continue;
      const Token t = Take();
      lhs = Binary(t, lhs, Additive());
      for (const char* again : {"==", "!=", "<=", ">=", "<", ">"}) {
        if (At(again)) throw Error(Peek(), "comparisons do not chain; compare two values at a time");
      }
      break;
    }
    return lhs;
  }

  int Additive() {
    int lhs = Term();
    while (At("+") || At("-")) {
      const Token t = Take();
      lhs = Binary(t, lhs, Term());
    }
    return lhs;
  }

  int Term() {
    int lhs = Unary();
    while (At("*") || At("/") || At("//") || At("%")) {
      const Token t = Take();
      lhs = Binary(t, lhs, Unary());
    }
    return lhs;
  }

  int Unary() {
    const Nest nest(*this, Peek());
    if (At("-") || At("+")) {
      const Token t = Take();
      const int operand = Unary();
      if (t.text == "+") return operand;
      ExprNode n;
      n.kind = ExprNode::Kind::kUnary;
      n.column = t.column;
      n.text = "-";
      n.args = {operand};
      return Add(std::move(n));
    }
    const int base = Primary();
    if (!At("**")) return base;
    const Token t = Take();
    return Binary(t, base, Unary());
  }

  int Primary() {
    const Token t = Take();
    switch (t.kind) {
      case Token::Kind::kNumber: return Number(t);
      case Token::Kind::kName: return At("(") ? Call(t) : Add(NameNode(t));
      case Token::Kind::kSymbol:
        if (t.text == "(") {
          const int inner = Comparison();
          if (!At(")")) throw Error(Peek(), "expected \")\" to close the \"(\" at column " + std::to_string(t.column) +
                                                ", got " + Describe(Peek()));
          Take();
          return inner;
        }
        break;
      case Token::Kind::kEnd: break;
    }
    throw Error(t, "expected a number, a name or \"(\", got " + Describe(t));
  }

  static ExprNode NameNode(const Token& t) {
    ExprNode n;
    n.kind = ExprNode::Kind::kName;
    n.column = t.column;
    n.text = t.text;
    return n;
  }

  int Call(const Token& name) {
    ExprNode n = NameNode(name);
    n.kind = ExprNode::Kind::kCall;
    Take();  // "("
    if (At(")")) throw Error(Peek(), name.text + "(): expected an argument, got \")\"");
    while (true) {
      n.args.push_back(Comparison());
      if (At(",")) {
        Take();
        continue;
      }
      if (At(")")) break;
      throw Error(Peek(), "expected \",\" or \")\" in the arguments of " + name.text + "(), got " + Describe(Peek()));
    }
    Take();  // ")"
    return Add(std::move(n));
  }

  int Number(const Token& t) {
    ExprNode n;
    n.column = t.column;
    n.text = t.text;
    const bool is_float = t.text.find_first_of(".eE") != std::string::npos;
    errno = 0;
    if (is_float) {
      n.kind = ExprNode::Kind::kFloat;
      n.float_value = std::strtod(t.text.c_str(), nullptr);
      if (errno == ERANGE && std::abs(n.float_value) > 1) {
        throw Error(t, "the number " + t.text + " is out of range");
      }
    } else {
      n.kind = ExprNode::Kind::kInt;
      const unsigned long long v = std::strtoull(t.text.c_str(), nullptr, 10);
      if (errno == ERANGE || v > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max())) {
        throw Error(t, "the integer " + t.text + " does not fit int64");
      }
      n.int_value = static_cast<int64_t>(v);
    }
    return Add(std::move(n));
  }

  std::vector<Token> tokens_;
  size_t next_ = 0;
  int depth_ = 0;
  ExprTree tree_;
};

}  // namespace

ExprTree ParseExpression(const std::string& source) { return Parser(source, Tokenizer(source).Run()).Run(); }

}  // namespace conveyor::ops
