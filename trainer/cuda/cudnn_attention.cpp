// commscope::trainer::cuda::CudnnAttention. Every cuDNN call is made in this file and checked:
// a failure throws std::runtime_error naming the call, the descriptor and cuDNN's status string
// (and cuDNN's last error message). Descriptor owns one backend descriptor; Graph builds the
// tensors and operations of one operation graph and turns it into an execution plan (engine
// heuristics, then the first engine config whose plan finalizes).
//
// Only the stable cuDNN 9 backend API is used (no attribute newer than 9.0): the cuDNN found at
// run time may be a different 9.x than the headers.
#include "cudnn_attention.hpp"

#include <stdexcept>
#include <string>

#if COMMSCOPE_HAVE_CUDNN

#include <cudnn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace commscope::trainer::cuda {
namespace {

[[noreturn]] void throw_cudnn(cudnnStatus_t status, const std::string& what) {
  std::array<char, 512> last{};
  cudnnGetLastErrorString(last.data(), last.size());
  std::string message = "cuDNN: " + what + ": " + cudnnGetErrorString(status);
  if (last[0] != '\0') message += " (" + std::string(last.data()) + ")";
  throw std::runtime_error(message);
}

void check(cudnnStatus_t status, const std::string& what) {
  if (status != CUDNN_STATUS_SUCCESS) throw_cudnn(status, what);
}

void check_cuda(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw std::runtime_error("CudnnAttention: " + what + ": " + cudaGetErrorString(e));
}

// The attribute type cuDNN expects for each C++ value type we set.
template <class T>
constexpr cudnnBackendAttributeType_t attribute_type();
template <>
constexpr cudnnBackendAttributeType_t attribute_type<int64_t>() {
  return CUDNN_TYPE_INT64;
}
template <>
constexpr cudnnBackendAttributeType_t attribute_type<float>() {
  return CUDNN_TYPE_FLOAT;
}
template <>
constexpr cudnnBackendAttributeType_t attribute_type<bool>() {
  return CUDNN_TYPE_BOOLEAN;
}
template <>
constexpr cudnnBackendAttributeType_t attribute_type<cudnnDataType_t>() {
  return CUDNN_TYPE_DATA_TYPE;
}
template <>
constexpr cudnnBackendAttributeType_t attribute_type<cudnnPointwiseMode_t>() {
  return CUDNN_TYPE_POINTWISE_MODE;
}
template <>
constexpr cudnnBackendAttributeType_t attribute_type<cudnnReduceTensorOp_t>() {
  return CUDNN_TYPE_REDUCTION_OPERATOR_TYPE;
}
template <>
constexpr cudnnBackendAttributeType_t attribute_type<cudnnBackendHeurMode_t>() {
  return CUDNN_TYPE_HEUR_MODE;
}
template <>
constexpr cudnnBackendAttributeType_t attribute_type<cudnnHandle_t>() {
  return CUDNN_TYPE_HANDLE;
}
template <>
constexpr cudnnBackendAttributeType_t attribute_type<cudnnBackendDescriptor_t>() {
  return CUDNN_TYPE_BACKEND_DESCRIPTOR;
}

// Owns one cudnnBackendDescriptor_t (destroyed with it). Move-only. `name` says which descriptor
// in error messages ("tensor 1003", "matmul bmm1", ...).
class Descriptor {
 public:
  Descriptor(cudnnBackendDescriptorType_t type, std::string name) : name_(std::move(name)) {
    check(cudnnBackendCreateDescriptor(type, &desc_), "cudnnBackendCreateDescriptor(" + name_ + ")");
  }
  Descriptor(Descriptor&& o) noexcept : desc_(std::exchange(o.desc_, nullptr)), name_(std::move(o.name_)) {}
  Descriptor& operator=(Descriptor&&) = delete;
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (desc_ != nullptr) static_cast<void>(cudnnBackendDestroyDescriptor(desc_));
  }

  cudnnBackendDescriptor_t get() const { return desc_; }
  const std::string& name() const { return name_; }

  // Sets `count` values of attribute `attr`.
  template <class T>
  Descriptor& set(cudnnBackendAttributeName_t attr, const T* values, int64_t count) {
    check(cudnnBackendSetAttribute(desc_, attr, attribute_type<T>(), count, values),
          "cudnnBackendSetAttribute(" + name_ + ", attribute " + std::to_string(static_cast<int>(attr)) + ")");
    return *this;
  }
  template <class T>
  Descriptor& set(cudnnBackendAttributeName_t attr, T value) {
    return set(attr, &value, 1);
  }
  // Device pointers (cudnnBackendDescriptor_t is void* too, so these have their own name).
  Descriptor& set_pointers(cudnnBackendAttributeName_t attr, void* const* values, int64_t count) {
    check(cudnnBackendSetAttribute(desc_, attr, CUDNN_TYPE_VOID_PTR, count, values),
          "cudnnBackendSetAttribute(" + name_ + ", attribute " + std::to_string(static_cast<int>(attr)) + ")");
    return *this;
  }
  void finalize() { check(try_finalize(), "cudnnBackendFinalize(" + name_ + ")"); }
  // For the engine configs we try in turn: the status, not an exception.
  cudnnStatus_t try_finalize() { return cudnnBackendFinalize(desc_); }

 private:
  cudnnBackendDescriptor_t desc_ = nullptr;
  std::string name_;
};

using Dims = std::array<int64_t, 4>;

// An execution plan and everything it was built from (kept alive with it), and the host values
// of the graph's by-value scalars, which the variant pack points at.
struct Plan {
  std::vector<Descriptor> parts;     // tensors, operations, graph, heuristics, engine configs
  std::unique_ptr<Descriptor> plan;  // the finalized execution plan
  int64_t workspace_bytes = 0;       // what the plan asks for
  std::map<int64_t, float> scalars;  // uid -> value of each by-value tensor
};

// Builds one operation graph. tensor() and the operation calls add descriptors; plan() finalizes
// the graph and returns its plan. Operations are added in data-flow order.
class Graph {
 public:
  explicit Graph(std::string name) : name_(std::move(name)) {}

  // A tensor in memory (uid chosen by the caller: the variant pack names it).
  cudnnBackendDescriptor_t tensor(int64_t uid, const Dims& dims, const Dims& strides, cudnnDataType_t type) {
    return make_tensor(uid, dims, strides, type, false, false);
  }
  // An intermediate that never reaches memory (uids from 1000 on).
  cudnnBackendDescriptor_t virtual_tensor(const Dims& dims, const Dims& strides, cudnnDataType_t type) {
    return make_tensor(next_virtual_uid_++, dims, strides, type, true, false);
  }
  // A float scalar passed by value at execution ([1,1,1,1]).
  cudnnBackendDescriptor_t scalar(int64_t uid, float value) {
    scalars_[uid] = value;
    const Dims one{1, 1, 1, 1};
    return make_tensor(uid, one, one, CUDNN_DATA_FLOAT, false, true);
  }

  // y = mode(x[, b[, t]]) elementwise with broadcasting; compute type `math`; `axis` for GEN_INDEX.
  void pointwise(const std::string& what, cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x,
                 cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t, cudnnBackendDescriptor_t y,
                 cudnnDataType_t math = CUDNN_DATA_FLOAT, int64_t axis = -1) {
    Descriptor& pw = add(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, "pointwise " + what);
    pw.set(CUDNN_ATTR_POINTWISE_MODE, mode).set(CUDNN_ATTR_POINTWISE_MATH_PREC, math);
    if (mode == CUDNN_POINTWISE_GEN_INDEX) pw.set(CUDNN_ATTR_POINTWISE_AXIS, axis);
    pw.finalize();
    const cudnnBackendDescriptor_t pw_desc = pw.get();
    Descriptor& op = add_op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "operation pointwise " + what);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw_desc).set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b != nullptr) op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
    if (t != nullptr) op.set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y)
        .set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 1.0f)
        .set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 1.0f)
        .finalize();
  }
  // c = a b over the last two dimensions, batched over the first two; float accumulation.
  void matmul(const std::string& what, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
              cudnnBackendDescriptor_t c) {
    Descriptor& mm = add(CUDNN_BACKEND_MATMUL_DESCRIPTOR, "matmul " + what);
    mm.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT).finalize();
    const cudnnBackendDescriptor_t mm_desc = mm.get();
    add_op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, "operation matmul " + what)
        .set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
        .set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
        .set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
        .set(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm_desc)
        .finalize();
  }
  // y = op over the dimensions where y has extent 1; float compute.
  void reduction(const std::string& what, cudnnReduceTensorOp_t reduce, cudnnBackendDescriptor_t x,
                 cudnnBackendDescriptor_t y) {
    Descriptor& red = add(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, "reduction " + what);
    red.set(CUDNN_ATTR_REDUCTION_OPERATOR, reduce).set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT).finalize();
    const cudnnBackendDescriptor_t red_desc = red.get();
    add_op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, "operation reduction " + what)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, red_desc)
        .finalize();
  }
  // y = x seen with other dimensions/strides (a transpose here: no data moves).
  void reshape(const std::string& what, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
    add_op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, "operation reshape " + what)
        .set(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x)
        .set(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y)
        .finalize();
  }

  // Finalizes the operation graph, asks the heuristics (mode A, then the fallback list) for engine
  // configs and returns the plan of the first config that finalizes. Throws when none does.
  std::unique_ptr<Plan> plan(cudnnHandle_t handle) {
    auto result = std::make_unique<Plan>();
    result->scalars = scalars_;
    std::vector<cudnnBackendDescriptor_t> ops;
    for (const Descriptor* op : ops_) ops.push_back(op->get());
    Descriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph " + name_);
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, handle)
        .set(CUDNN_ATTR_OPERATIONGRAPH_OPS, ops.data(), static_cast<int64_t>(ops.size()))
        .finalize();
    const cudnnBackendDescriptor_t graph_desc = graph.get();
    std::string tried;
    for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
      const std::string mode_name = mode == CUDNN_HEUR_MODE_A ? "heuristics A" : "fallback heuristics";
      Descriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, mode_name + " " + name_);
      heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph_desc).set(CUDNN_ATTR_ENGINEHEUR_MODE, mode);
      if (const cudnnStatus_t s = heur.try_finalize(); s != CUDNN_STATUS_SUCCESS) {
        tried += "; " + mode_name + ": " + cudnnGetErrorString(s);
        continue;
      }
      int64_t count = 0;
      check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                     &count, nullptr),
            "cudnnBackendGetAttribute(" + heur.name() + ", results count)");
      std::vector<Descriptor> configs;
      std::vector<cudnnBackendDescriptor_t> raw;
      for (int64_t i = 0; i < count; ++i) {
        configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config " + std::to_string(i));
        raw.push_back(configs.back().get());
      }
      int64_t got = 0;
      if (count > 0)
        check(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                       &got, raw.data()),
              "cudnnBackendGetAttribute(" + heur.name() + ", results)");
      tried += "; " + mode_name + ": " + std::to_string(got) + " engine configs";
      for (int64_t i = 0; i < got; ++i) {
        auto plan = std::make_unique<Descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan " + name_);
        plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, handle)
            .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, raw[static_cast<std::size_t>(i)]);
        if (const cudnnStatus_t s = plan->try_finalize(); s != CUDNN_STATUS_SUCCESS) {
          tried += std::string(i == 0 ? " (" : ", ") + cudnnGetErrorString(s);
          if (i + 1 == got) tried += ")";
          continue;
        }
        int64_t n = 0;
        check(cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                       &result->workspace_bytes),
              "cudnnBackendGetAttribute(" + plan->name() + ", workspace size)");
        result->plan = std::move(plan);
        for (Descriptor& d : parts_) result->parts.push_back(std::move(d));
        result->parts.push_back(std::move(graph));
        result->parts.push_back(std::move(heur));
        for (Descriptor& d : configs) result->parts.push_back(std::move(d));
        return result;
      }
    }
    throw std::runtime_error("cuDNN: no engine builds a plan for " + name_ + tried);
  }

 private:
  Descriptor& add(cudnnBackendDescriptorType_t type, std::string what) {
    parts_.emplace_back(type, std::move(what));
    return parts_.back();
  }
  Descriptor& add_op(cudnnBackendDescriptorType_t type, std::string what) {
    Descriptor& op = add(type, std::move(what));
    ops_.push_back(&op);
    return op;
  }
  cudnnBackendDescriptor_t make_tensor(int64_t uid, const Dims& dims, const Dims& strides, cudnnDataType_t type,
                                       bool is_virtual, bool by_value) {
    Descriptor& t = add(CUDNN_BACKEND_TENSOR_DESCRIPTOR, "tensor " + std::to_string(uid));
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, type)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, dims.data(), 4)
        .set(CUDNN_ATTR_TENSOR_STRIDES, strides.data(), 4)
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, int64_t{16});
    if (is_virtual) t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, true);
    if (by_value) t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, true);
    t.finalize();
    return t.get();
  }

  std::string name_;
  std::deque<Descriptor> parts_;  // deque: references (ops_) stay valid as it grows
  std::vector<Descriptor*> ops_;  // the operations among parts_, in order
  std::map<int64_t, float> scalars_;
  int64_t next_virtual_uid_ = 1000;
};

// The uids of the tensors in memory (the variant pack's names for them).
enum Uid : int64_t {
  kQ = 1,
  kK,
  kV,
  kO,
  kStats,
  kScale,
  kNegInf,
  kDO,
  kDQ,
  kDK,
  kDV,
  kSoftmaxSum,
  kDQAccum,
  kOne,
};

struct Shape {
  int64_t b, h, s, d;  // batch, heads, sequence length, head size
  auto operator<=>(const Shape&) const = default;
  int64_t c() const { return h * d; }
  std::string str() const {
    return "B=" + std::to_string(b) + " T=" + std::to_string(s) + " NH=" + std::to_string(h) +
           " hs=" + std::to_string(d);
  }
};

// The value a masked score takes: -inf, or the lowest float before cuDNN 9.10 (which, as
// cudnn-frontend notes, prefers it in the softmax).
float masked_score() {
  return cudnnGetVersion() < 91000 ? std::numeric_limits<float>::lowest() : -std::numeric_limits<float>::infinity();
}

// The layouts, in [b, h, s, d] order. Q, K and V are views into qkv [B,T,3C]; O and dO into
// [B,T,C]; K^T and V^T are the same memory with the last two dimensions swapped.
struct Layouts {
  Dims qkv_dims, qkv_strides;      // Q, K, V, dQ, dK, dV: [b,h,s,d], strides [T*3C, hs, 3C, 1]
  Dims t_dims, t_strides;          // K^T, V^T: [b,h,d,s], strides [T*3C, hs, 1, 3C]
  Dims o_dims, o_strides;          // O, dO: [b,h,s,d], strides [T*C, hs, C, 1]
  Dims score_dims, score_strides;  // [b,h,s,s] row-major
  Dims score_t_strides;            // the same dims, transposed ([.., 1, s])
  Dims row_dims, row_strides;      // [b,h,s,1]: stats, row max/sum
  explicit Layouts(const Shape& x) {
    const int64_t c3 = 3 * x.c();
    qkv_dims = {x.b, x.h, x.s, x.d};
    qkv_strides = {x.s * c3, x.d, c3, 1};
    t_dims = {x.b, x.h, x.d, x.s};
    t_strides = {x.s * c3, x.d, 1, c3};
    o_dims = qkv_dims;
    o_strides = {x.s * x.c(), x.d, x.c(), 1};
    score_dims = {x.b, x.h, x.s, x.s};
    score_strides = {x.h * x.s * x.s, x.s * x.s, x.s, 1};
    score_t_strides = {x.h * x.s * x.s, x.s * x.s, 1, x.s};
    row_dims = {x.b, x.h, x.s, 1};
    row_strides = {x.h * x.s, x.s, 1, 1};
  }
};

// Adds the causal mask to `g`: returns where(row >= col, s, masked), a new float score tensor.
cudnnBackendDescriptor_t causal_mask(Graph& g, const Layouts& l, cudnnBackendDescriptor_t s,
                                     cudnnBackendDescriptor_t masked) {
  const auto row = g.virtual_tensor(l.score_dims, l.score_strides, CUDNN_DATA_INT32);
  const auto col = g.virtual_tensor(l.score_dims, l.score_strides, CUDNN_DATA_INT32);
  const auto keep = g.virtual_tensor(l.score_dims, l.score_strides, CUDNN_DATA_BOOLEAN);
  const auto out = g.virtual_tensor(l.score_dims, l.score_strides, CUDNN_DATA_FLOAT);
  g.pointwise("gen_row_index", CUDNN_POINTWISE_GEN_INDEX, s, nullptr, nullptr, row, CUDNN_DATA_FLOAT, 2);
  g.pointwise("gen_col_index", CUDNN_POINTWISE_GEN_INDEX, s, nullptr, nullptr, col, CUDNN_DATA_FLOAT, 3);
  g.pointwise("row_ge_col", CUDNN_POINTWISE_CMP_GE, row, col, nullptr, keep, CUDNN_DATA_BOOLEAN);
  g.pointwise("causal_select", CUDNN_POINTWISE_BINARY_SELECT, s, masked, keep, out);
  return out;
}

// The forward graph (see the header for the formulas).
std::unique_ptr<Plan> build_forward(cudnnHandle_t handle, const Shape& x) {
  const Layouts l(x);
  Graph g("attention forward " + x.str());
  const auto q = g.tensor(kQ, l.qkv_dims, l.qkv_strides, CUDNN_DATA_BFLOAT16);
  const auto kt = g.tensor(kK, l.t_dims, l.t_strides, CUDNN_DATA_BFLOAT16);
  const auto v = g.tensor(kV, l.qkv_dims, l.qkv_strides, CUDNN_DATA_BFLOAT16);
  const auto o = g.tensor(kO, l.o_dims, l.o_strides, CUDNN_DATA_BFLOAT16);
  const auto stats = g.tensor(kStats, l.row_dims, l.row_strides, CUDNN_DATA_FLOAT);
  const auto scale = g.scalar(kScale, static_cast<float>(1.0 / std::sqrt(static_cast<double>(x.d))));
  const auto neg_inf = g.scalar(kNegInf, masked_score());
  auto score = [&](cudnnDataType_t type = CUDNN_DATA_FLOAT) {
    return g.virtual_tensor(l.score_dims, l.score_strides, type);
  };
  auto row = [&] { return g.virtual_tensor(l.row_dims, l.row_strides, CUDNN_DATA_FLOAT); };

  const auto s = score();
  g.matmul("bmm1 Q K^T", q, kt, s);
  const auto s_scaled = score();
  g.pointwise("attn_scale", CUDNN_POINTWISE_MUL, s, scale, nullptr, s_scaled);
  const auto s_masked = causal_mask(g, l, s_scaled, neg_inf);
  const auto m = row();
  g.reduction("max", CUDNN_REDUCE_TENSOR_MAX, s_masked, m);
  const auto sub = score();
  g.pointwise("sub_max", CUDNN_POINTWISE_SUB, s_masked, m, nullptr, sub);
  const auto e = score();
  g.pointwise("exp", CUDNN_POINTWISE_EXP, sub, nullptr, nullptr, e);
  const auto z = row();
  g.reduction("sum", CUDNN_REDUCE_TENSOR_ADD, e, z);
  const auto log_z = row();
  g.pointwise("log", CUDNN_POINTWISE_LOG, z, nullptr, nullptr, log_z);
  g.pointwise("stats", CUDNN_POINTWISE_ADD, m, log_z, nullptr, stats);
  const auto p = score(CUDNN_DATA_BFLOAT16);
  g.pointwise("div", CUDNN_POINTWISE_DIV, e, z, nullptr, p);
  g.matmul("bmm2 P V", p, v, o);
  return g.plan(handle);
}

// The backward graph (see the header), as cudnn-frontend lowers SDPA backward for cuDNN 9: the
// softmax_sum (Dsum) and the float dQ accumulator are tensors in memory that the caller provides.
std::unique_ptr<Plan> build_backward(cudnnHandle_t handle, const Shape& x) {
  const Layouts l(x);
  Graph g("attention backward " + x.str());
  const auto q = g.tensor(kQ, l.qkv_dims, l.qkv_strides, CUDNN_DATA_BFLOAT16);
  const auto kt = g.tensor(kK, l.t_dims, l.t_strides, CUDNN_DATA_BFLOAT16);
  const auto vt = g.tensor(kV, l.t_dims, l.t_strides, CUDNN_DATA_BFLOAT16);
  const auto o = g.tensor(kO, l.o_dims, l.o_strides, CUDNN_DATA_BFLOAT16);
  const auto d_o = g.tensor(kDO, l.o_dims, l.o_strides, CUDNN_DATA_BFLOAT16);
  const auto stats = g.tensor(kStats, l.row_dims, l.row_strides, CUDNN_DATA_FLOAT);
  const auto dq = g.tensor(kDQ, l.qkv_dims, l.qkv_strides, CUDNN_DATA_BFLOAT16);
  const auto dk = g.tensor(kDK, l.qkv_dims, l.qkv_strides, CUDNN_DATA_BFLOAT16);
  const auto dv = g.tensor(kDV, l.qkv_dims, l.qkv_strides, CUDNN_DATA_BFLOAT16);
  const auto softmax_sum = g.tensor(kSoftmaxSum, l.row_dims, l.row_strides, CUDNN_DATA_FLOAT);
  const Dims packed{x.h * x.s * x.d, x.s * x.d, x.d, 1};
  const auto dq_accum = g.tensor(kDQAccum, l.qkv_dims, packed, CUDNN_DATA_FLOAT);
  const auto scale = g.scalar(kScale, static_cast<float>(1.0 / std::sqrt(static_cast<double>(x.d))));
  const auto neg_inf = g.scalar(kNegInf, masked_score());
  const auto one = g.scalar(kOne, 1.0f);
  auto score = [&](cudnnDataType_t type = CUDNN_DATA_FLOAT) {
    return g.virtual_tensor(l.score_dims, l.score_strides, type);
  };

  // Dsum = sum_i dO * O (per row), stored as softmax_sum.
  const auto do_o = g.virtual_tensor(l.o_dims, {x.h * x.s * x.d, x.s * x.d, x.h * x.d, 1}, CUDNN_DATA_FLOAT);
  g.pointwise("mul_dO_O", CUDNN_POINTWISE_MUL, d_o, o, nullptr, do_o);
  const auto dsum = g.virtual_tensor(l.row_dims, l.row_strides, CUDNN_DATA_FLOAT);
  g.reduction("reduce_dO_O", CUDNN_REDUCE_TENSOR_ADD, do_o, dsum);
  g.pointwise("softmax_sum", CUDNN_POINTWISE_MUL, dsum, one, nullptr, softmax_sum);

  // P = exp(mask(Q K^T * scale - lse)); dV = P^T dO.
  const auto s = score();
  g.matmul("Q K^T", q, kt, s);
  const auto s_scaled = score();
  g.pointwise("attn_scale", CUDNN_POINTWISE_MUL, s, scale, nullptr, s_scaled);
  const auto s_sub = score();
  g.pointwise("sub_stats", CUDNN_POINTWISE_SUB, s_scaled, stats, nullptr, s_sub);
  const auto s_masked = causal_mask(g, l, s_sub, neg_inf);
  const auto p = score();
  g.pointwise("exp", CUDNN_POINTWISE_EXP, s_masked, nullptr, nullptr, p);
  const auto p_t = g.virtual_tensor(l.score_dims, l.score_t_strides, CUDNN_DATA_BFLOAT16);
  g.reshape("P^T", p, p_t);
  g.matmul("P^T dO", p_t, d_o, dv);

  // dS = P * (dO V^T - Dsum) * scale; dK = dS^T Q.
  const auto dp = score();
  g.matmul("dO V^T", d_o, vt, dp);
  const auto dp_sub = score();
  g.pointwise("sub_softmax_sum", CUDNN_POINTWISE_SUB, dp, softmax_sum, nullptr, dp_sub);
  const auto ds_unscaled = score();
  g.pointwise("mul_P", CUDNN_POINTWISE_MUL, dp_sub, p, nullptr, ds_unscaled);
  const auto ds = score();
  g.pointwise("dS_scale", CUDNN_POINTWISE_MUL, ds_unscaled, scale, nullptr, ds);
  const auto ds_t = g.virtual_tensor(l.score_dims, l.score_t_strides, CUDNN_DATA_BFLOAT16);
  g.reshape("dS^T", ds, ds_t);
  g.matmul("dS^T Q", ds_t, q, dk);

  // dQ = dS K, accumulated in float, then rounded into dqkv.
  const auto k = g.virtual_tensor(l.qkv_dims, l.qkv_strides, CUDNN_DATA_FLOAT);
  g.reshape("K", kt, k);
  g.matmul("dS K", ds, k, dq_accum);
  g.pointwise("identity_dQ", CUDNN_POINTWISE_IDENTITY, dq_accum, nullptr, nullptr, dq);
  return g.plan(handle);
}

// Runs `plan` with the tensors (uid, device pointer) and the plan's by-value scalars.
void execute(cudnnHandle_t handle, Plan& plan, std::vector<std::pair<int64_t, void*>> tensors, void* workspace) {
  for (auto& [uid, value] : plan.scalars) tensors.emplace_back(uid, &value);
  std::vector<int64_t> uids;
  std::vector<void*> pointers;
  for (const auto& [uid, pointer] : tensors) {
    uids.push_back(uid);
    pointers.push_back(pointer);
  }
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack for " + plan.plan->name());
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, uids.data(), static_cast<int64_t>(uids.size()))
      .set_pointers(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, pointers.data(), static_cast<int64_t>(pointers.size()))
      .set_pointers(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, &workspace, 1)
      .finalize();
  check(cudnnBackendExecute(handle, plan.plan->get(), pack.get()), "cudnnBackendExecute(" + plan.plan->name() + ")");
}

constexpr std::size_t kAlign = 256;  // offsets of the parts of the workspace
std::size_t aligned(std::size_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

void* mutable_ptr(const void* p) {
  return const_cast<void*>(p);
}  // the variant pack takes void*

}  // namespace

struct CudnnAttention::Impl {
  // A plan, or why there is none (built once per shape).
  struct Entry {
    std::unique_ptr<Plan> plan;
    std::string error;
  };

  cudnnHandle_t handle = nullptr;
  std::map<Shape, Entry> forward_plans, backward_plans;
  void* workspace = nullptr;  // device, `capacity` bytes
  std::size_t capacity = 0;

  Entry& entry(bool backward, const Shape& x) {
    auto& plans = backward ? backward_plans : forward_plans;
    if (auto it = plans.find(x); it != plans.end()) return it->second;
    Entry e;
    try {
      e.plan = backward ? build_backward(handle, x) : build_forward(handle, x);
    } catch (const std::exception& error) {
      e.error = error.what();
    }
    return plans.emplace(x, std::move(e)).first->second;
  }
  Plan& plan(bool backward, const Shape& x) {
    Entry& e = entry(backward, x);
    if (!e.plan)
      throw std::runtime_error(std::string("CudnnAttention::") + (backward ? "backward" : "forward") + " " + x.str() +
                               ": " + e.error);
    return *e.plan;
  }
  // At least `bytes` of workspace. Growing waits for the device: work queued earlier on any
  // stream may still be using the old buffer.
  void* reserve(std::size_t bytes) {
    if (bytes > capacity) {
      if (workspace != nullptr) {
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize before growing the workspace");
        check_cuda(cudaFree(workspace), "cudaFree workspace");
        workspace = nullptr;
        capacity = 0;
      }
      check_cuda(cudaMalloc(&workspace, bytes), "cudaMalloc workspace of " + std::to_string(bytes) + " bytes");
      capacity = bytes;
    }
    return workspace;
  }
};

namespace {

Shape shape_of(int B, int Tn, int C, int NH) {
  if (B <= 0 || Tn <= 0 || NH <= 0 || C <= 0 || C % NH != 0)
    throw std::invalid_argument("CudnnAttention: bad shape B=" + std::to_string(B) + " T=" + std::to_string(Tn) +
                                " C=" + std::to_string(C) + " NH=" + std::to_string(NH));
  return Shape{B, NH, Tn, C / NH};
}

}  // namespace

bool CudnnAttention::built() {
  return true;
}

std::string CudnnAttention::version() {
  const std::size_t v = cudnnGetVersion();  // major*10000 + minor*100 + patch (cuDNN 9)
  return "cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

CudnnAttention::CudnnAttention() : impl_(std::make_unique<Impl>()) {
  check(cudnnCreate(&impl_->handle), "cudnnCreate");
}

CudnnAttention::~CudnnAttention() {
  if (!impl_) return;
  impl_->forward_plans.clear();  // plans before the handle they were built with
  impl_->backward_plans.clear();
  if (impl_->workspace != nullptr) {
    static_cast<void>(cudaDeviceSynchronize());  // queued work may still use it
    static_cast<void>(cudaFree(impl_->workspace));
  }
  if (impl_->handle != nullptr) static_cast<void>(cudnnDestroy(impl_->handle));
}

bool CudnnAttention::supports(int B, int Tn, int C, int NH) {
  try {
    const Shape x = shape_of(B, Tn, C, NH);
    return impl_->entry(false, x).plan != nullptr && impl_->entry(true, x).plan != nullptr;
  } catch (const std::exception&) {
    return false;
  }
}

void CudnnAttention::forward(__nv_bfloat16* out, float* lse, const __nv_bfloat16* qkv, int B, int Tn, int C, int NH,
                             cudaStream_t stream) {
  const Shape x = shape_of(B, Tn, C, NH);
  Plan& plan = impl_->plan(false, x);
  void* workspace = impl_->reserve(static_cast<std::size_t>(plan.workspace_bytes));
  check(cudnnSetStream(impl_->handle, stream), "cudnnSetStream");
  execute(
      impl_->handle, plan,
      {{kQ, mutable_ptr(qkv)}, {kK, mutable_ptr(qkv + C)}, {kV, mutable_ptr(qkv + 2 * C)}, {kO, out}, {kStats, lse}},
      workspace);
}

namespace {

// The backward's workspace: [plan workspace | softmax_sum [B,NH,T] float | dQ accumulator [B,NH,T,hs] float].
struct BackwardWorkspace {
  std::size_t sum_at, accum_at, accum_bytes;
  std::size_t bytes() const { return accum_at + accum_bytes; }
};
BackwardWorkspace backward_workspace(const Plan& plan, const Shape& x) {
  const std::size_t rows = static_cast<std::size_t>(x.b * x.h * x.s);
  const std::size_t sum_at = aligned(static_cast<std::size_t>(plan.workspace_bytes));
  return {sum_at, sum_at + aligned(rows * sizeof(float)), rows * static_cast<std::size_t>(x.d) * sizeof(float)};
}

}  // namespace

std::size_t CudnnAttention::reserve(int B, int Tn, int C, int NH) {
  const Shape x = shape_of(B, Tn, C, NH);
  const std::size_t forward = static_cast<std::size_t>(impl_->plan(false, x).workspace_bytes);
  impl_->reserve(std::max(forward, backward_workspace(impl_->plan(true, x), x).bytes()));
  return impl_->capacity;
}

void CudnnAttention::backward(__nv_bfloat16* dqkv, const __nv_bfloat16* dout, const __nv_bfloat16* qkv,
                              const __nv_bfloat16* out, const float* lse, int B, int Tn, int C, int NH,
                              cudaStream_t stream) {
  const Shape x = shape_of(B, Tn, C, NH);
  Plan& plan = impl_->plan(true, x);
  const BackwardWorkspace layout = backward_workspace(plan, x);
  const std::size_t sum_at = layout.sum_at, accum_at = layout.accum_at, accum_bytes = layout.accum_bytes;
  auto* workspace = static_cast<char*>(impl_->reserve(layout.bytes()));
  // cuDNN before 9.6 adds into the dQ accumulator (cudnn-frontend zeroes it for those versions).
  if (cudnnGetVersion() < 90600)
    check_cuda(cudaMemsetAsync(workspace + accum_at, 0, accum_bytes, stream), "cudaMemsetAsync dQ accumulator");
  check(cudnnSetStream(impl_->handle, stream), "cudnnSetStream");
  execute(impl_->handle, plan,
          {{kQ, mutable_ptr(qkv)},
           {kK, mutable_ptr(qkv + C)},
           {kV, mutable_ptr(qkv + 2 * C)},
           {kO, mutable_ptr(out)},
           {kDO, mutable_ptr(dout)},
           {kStats, mutable_ptr(lse)},
           {kDQ, dqkv},
           {kDK, dqkv + C},
           {kDV, dqkv + 2 * C},
           {kSoftmaxSum, workspace + sum_at},
           {kDQAccum, workspace + accum_at}},
          workspace);
}

}  // namespace commscope::trainer::cuda

#else  // !COMMSCOPE_HAVE_CUDNN: the class exists and says it is unavailable.

namespace commscope::trainer::cuda {

struct CudnnAttention::Impl {};

bool CudnnAttention::built() {
  return false;
}
std::string CudnnAttention::version() {
  return "";
}
CudnnAttention::CudnnAttention() {
  throw std::runtime_error("CudnnAttention: this build has no cuDNN (configure with cuDNN found, COMMSCOPE_CUDNN)");
}
CudnnAttention::~CudnnAttention() = default;
bool CudnnAttention::supports(int, int, int, int) {
  return false;
}
std::size_t CudnnAttention::reserve(int, int, int, int) {
  throw std::runtime_error("CudnnAttention: this build has no cuDNN");
}
void CudnnAttention::forward(__nv_bfloat16*, float*, const __nv_bfloat16*, int, int, int, int, cudaStream_t) {
  throw std::runtime_error("CudnnAttention: this build has no cuDNN");
}
void CudnnAttention::backward(__nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*,
                              const float*, int, int, int, int, cudaStream_t) {
  throw std::runtime_error("CudnnAttention: this build has no cuDNN");
}

}  // namespace commscope::trainer::cuda

#endif
