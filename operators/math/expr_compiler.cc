#include "operators/math/expr_compiler.h"

#include <algorithm>
#include <limits>

#include "core/util/strings.h"
#include "operators/math/expr_types.h"

namespace conveyor::ops {

namespace {

struct Function {
  const char* name;
  int arity;
};

constexpr Function kFunctions[] = {{"abs", 1},  {"ceil", 1}, {"clamp", 3}, {"exp", 1}, {"floor", 1}, {"log", 1},
                                   {"max", 2},  {"min", 2},  {"pow", 2},   {"round", 1}, {"sqrt", 1}, {"where", 3}};

const Function* FindFunction(const std::string& name) {
  for (const Function& f : kFunctions) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

int IndexOf(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

// Operators whose two operands may both be bool.
bool AllowsTwoBools(const std::string& op) { return op == "*" || op == "min" || op == "max" || op == "where"; }
bool IsComparison(const std::string& op) {
  return op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=";
}

// The instruction of an operator symbol or function name.
struct OpCode {
  const char* name;
  ExprOp op;
};
constexpr OpCode kOpCodes[] = {
    {"+", ExprOp::kAdd},       {"-", ExprOp::kSub},      {"*", ExprOp::kMul},       {"/", ExprOp::kDiv},
    {"//", ExprOp::kFloorDiv}, {"%", ExprOp::kMod},      {"**", ExprOp::kPow},      {"pow", ExprOp::kPow},
    {"min", ExprOp::kMin},     {"max", ExprOp::kMax},    {"==", ExprOp::kEq},       {"!=", ExprOp::kNe},
    {"<", ExprOp::kLt},        {"<=", ExprOp::kLe},      {">", ExprOp::kGt},        {">=", ExprOp::kGe},
    {"abs", ExprOp::kAbs},     {"floor", ExprOp::kFloor}, {"ceil", ExprOp::kCeil},  {"round", ExprOp::kRound},
    {"sqrt", ExprOp::kSqrt},   {"exp", ExprOp::kExp},    {"log", ExprOp::kLog},
};

ExprOp OpOf(const std::string& name) {
  for (const OpCode& c : kOpCodes) {
    if (name == c.name) return c.op;
  }
  return ExprOp::kAdd;  // unreachable: ResolveNames and the parser admit only the names above
}

class Compiler {
 public:
  Compiler(const ExprTree& tree, const ExprBindings& bindings, const std::vector<DType>& input_types)
      : tree_(tree), bindings_(bindings), input_types_(input_types), types_(tree.nodes.size(), DType::kBool) {}

  ExprProgram Run(std::optional<DType> out_type) {
    const DType result = Infer(tree_.root);
    Emit(tree_.root);
    const ExprNode& root = tree_.at(tree_.root);
    if (program_.size > kMaxExprCode) {
      throw Error(root, "the expression compiles to " + std::to_string(program_.size) + " instructions, at most " +
                            std::to_string(kMaxExprCode));
    }
    if (max_depth_ > kMaxExprStack) {
      throw Error(root, "the expression needs " + std::to_string(max_depth_) + " values at once, at most " +
                            std::to_string(kMaxExprStack));
    }
    program_.num_inputs = static_cast<int32_t>(input_types_.size());
    for (size_t k = 0; k < input_types_.size(); ++k) program_.input_types[k] = input_types_[k];
    program_.result_class = ClassOf(result);
    program_.out_type = out_type.value_or(result);
    return program_;
  }

 private:
  ExprError Error(const ExprNode& n, const std::string& detail) const { return ExprError(tree_.source, n.column, detail); }
  DType TypeOf(int node) const { return types_[static_cast<size_t>(node)]; }

  // Pass 1: the type of every node (and every type error).
  DType Infer(int i) {
    const ExprNode& n = tree_.at(i);
    std::vector<DType> args;
    for (int a : n.args) args.push_back(Infer(a));
    DType t = DType::kBool;
    switch (n.kind) {
      case ExprNode::Kind::kInt:
        t = n.int_value <= std::numeric_limits<int32_t>::max() ? DType::kInt32 : DType::kInt64;
        break;
      case ExprNode::Kind::kFloat: t = DType::kFloat32; break;
      case ExprNode::Kind::kName: {
        const int k = IndexOf(bindings_.inputs, n.text);
        t = k >= 0 ? input_types_[static_cast<size_t>(k)] : DType::kFloat32;
        break;
      }
      case ExprNode::Kind::kUnary:
        if (args[0] == DType::kBool) throw Error(n, "unary \"-\" of a bool operand; DALI has no negative bools");
        t = args[0];
        break;
      case ExprNode::Kind::kBinary:
      case ExprNode::Kind::kCall: t = InferOperator(n, args); break;
    }
    types_[static_cast<size_t>(i)] = t;
    return t;
  }

  DType InferOperator(const ExprNode& n, const std::vector<DType>& args) {
    const std::string& op = n.text;
    if (args.size() == 1) {
      if (op == "sqrt" || op == "exp" || op == "log") return FloatFunctionType(args[0]);
      return args[0];  // abs, floor, ceil, round
    }
    if (op == "clamp") return PromoteTypes(PromoteTypes(args[0], args[1]), args[2]);
    const DType a = op == "where" ? args[1] : args[0];
    const DType b = op == "where" ? args[2] : args[1];
    if (a == DType::kBool && b == DType::kBool && !AllowsTwoBools(op) && !IsComparison(op)) {
      throw Error(n, "\"" + op + "\" of two bool operands; DALI allows only * (and min, max, comparisons) between bools");
    }
    const DType promoted = PromoteTypes(a, b);
    if (IsComparison(op)) return DType::kBool;
    if (op == "/") return TrueDivisionType(promoted);
    return promoted;
  }

  // Pass 2: postfix code.
  void Emit(int i) {
    const ExprNode& n = tree_.at(i);
    const DType t = TypeOf(i);
    switch (n.kind) {
      case ExprNode::Kind::kInt: {
        ExprValue v;
        v.i = n.int_value;
        return Push(ExprOp::kConst, t, AddConst(n, v));
      }
      case ExprNode::Kind::kFloat: {
        ExprValue v;
        v.i = 0;
        v.f = static_cast<float>(n.float_value);
        return Push(ExprOp::kConst, t, AddConst(n, v));
      }
      case ExprNode::Kind::kName: {
        const int k = IndexOf(bindings_.inputs, n.text);
        if (k >= 0) return Push(ExprOp::kInput, t, k);
        return Push(ExprOp::kScalar, t, IndexOf(bindings_.scalars, n.text));
      }
      case ExprNode::Kind::kUnary:
        Emit(n.args[0]);
        return Push(ExprOp::kNeg, t);
      case ExprNode::Kind::kBinary:
      case ExprNode::Kind::kCall: return EmitOperator(n, t);
    }
  }

  void EmitOperator(const ExprNode& n, DType t) {
    const std::string& op = n.text;
    if (n.args.size() == 1) {
      EmitAs(n.args[0], t);
      const bool identity = (op == "abs" && t == DType::kBool) ||
                            ((op == "floor" || op == "ceil" || op == "round") && IsIntegral(t));
      if (!identity) Push(OpOf(op), t);
      return;
    }
    if (op == "clamp") {  // min(max(x, lo), hi)
      EmitAs(n.args[0], t);
      EmitAs(n.args[1], t);
      Push(ExprOp::kMax, t);
      EmitAs(n.args[2], t);
      return Push(ExprOp::kMin, t);
    }
    if (op == "where") {
      EmitAs(n.args[0], DType::kBool);
      EmitAs(n.args[1], t);
      EmitAs(n.args[2], t);
      return Push(ExprOp::kSelect, t);
    }
    const DType operands = IsComparison(op) ? PromoteTypes(TypeOf(n.args[0]), TypeOf(n.args[1])) : t;
    EmitAs(n.args[0], operands);
    EmitAs(n.args[1], operands);
    Push(OpOf(op), operands, 0, t);
  }

  // The node's code, then a conversion to `to` where the class (or bool-ness) changes.
  void EmitAs(int node, DType to) {
    Emit(node);
    const DType from = TypeOf(node);
    const bool to_bool = to == DType::kBool && from != DType::kBool;
    if (ClassOf(from) == ClassOf(to) && !to_bool) return;  // integers widen in place; half types are float
    Push(ExprOp::kConvert, to, static_cast<int>(ClassOf(from)));
  }

  // `compute`: the type whose class the instruction computes in; `result`: what it pushes
  // (comparisons: bool).
  void Push(ExprOp op, DType compute, int arg = 0, std::optional<DType> result = std::nullopt) {
    if (program_.size < kMaxExprCode) {
      program_.code[program_.size] = {op, ClassOf(compute), result.value_or(compute), static_cast<uint8_t>(arg)};
    }
    ++program_.size;
    switch (op) {
      case ExprOp::kInput:
      case ExprOp::kScalar:
      case ExprOp::kConst: ++depth_; break;
      case ExprOp::kSelect: depth_ -= 2; break;
      default:
        if (op >= ExprOp::kAdd) --depth_;
        break;
    }
    max_depth_ = std::max(max_depth_, depth_);
  }

  int AddConst(const ExprNode& n, ExprValue v) {
    if (num_consts_ == kMaxExprConsts) {
      throw Error(n, "the expression has more than " + std::to_string(kMaxExprConsts) + " numbers");
    }
    program_.consts[num_consts_] = v;
    return num_consts_++;
  }

  const ExprTree& tree_;
  const ExprBindings& bindings_;
  const std::vector<DType>& input_types_;
  std::vector<DType> types_;
  ExprProgram program_{};
  int num_consts_ = 0;
  int depth_ = 0;
  int max_depth_ = 0;
};

}  // namespace

ExprUse ResolveNames(const ExprTree& tree, const ExprBindings& bindings) {
  ExprUse use;
  use.inputs.assign(bindings.inputs.size(), 0);
  use.scalars.assign(bindings.scalars.size(), 0);
  std::vector<std::string> names = bindings.inputs;
  names.insert(names.end(), bindings.scalars.begin(), bindings.scalars.end());
  std::vector<std::string> functions;
  for (const Function& f : kFunctions) functions.emplace_back(f.name);
  const auto note = [](std::vector<int>& columns, int index, int column) {
    int& first = columns[static_cast<size_t>(index)];
    if (first == 0 || column < first) first = column;
  };
  for (const ExprNode& n : tree.nodes) {
    if (n.kind == ExprNode::Kind::kName) {
      const int k = IndexOf(bindings.inputs, n.text);
      const int s = IndexOf(bindings.scalars, n.text);
      if (k >= 0) {
        note(use.inputs, k, n.column);
      } else if (s >= 0) {
        note(use.scalars, s, n.column);
      } else {
        throw ExprError(tree.source, n.column,
                        "unknown name \"" + n.text + "\"; expected an input (" +
                            (bindings.inputs.empty() ? "none" : Join(bindings.inputs, ", ")) +
                            ") or a scalar argument (" + Join(bindings.scalars, ", ") + ")" + DidYouMean(n.text, names));
      }
    } else if (n.kind == ExprNode::Kind::kCall) {
      const Function* f = FindFunction(n.text);
      if (f == nullptr) {
        throw ExprError(tree.source, n.column,
                        "unknown function \"" + n.text + "\"; expected one of " + Join(functions, ", ") +
                            DidYouMean(n.text, functions));
      }
      if (static_cast<int>(n.args.size()) != f->arity) {
        throw ExprError(tree.source, n.column,
                        n.text + "() takes " + std::to_string(f->arity) + " argument" + (f->arity == 1 ? "" : "s") +
                            ", got " + std::to_string(n.args.size()));
      }
    }
  }
  return use;
}

ExprProgram CompileExpression(const ExprTree& tree, const ExprBindings& bindings, const std::vector<DType>& input_types,
                              std::optional<DType> out_type) {
  return Compiler(tree, bindings, input_types).Run(out_type);
}

}  // namespace conveyor::ops
