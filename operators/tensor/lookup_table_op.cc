// lookup_table (DALI's name and arguments): maps integer keys through a table given by keys and
// values; keys not in the table (negative, above the largest key, or never listed) give
// default_value.
//
// | input                  | arguments                                          | output             |
// |------------------------|----------------------------------------------------|--------------------|
// | uint8, int8, uint16,   | keys (each in [0, 65535]) and values, as many;     | dtype (default     |
// | int16, int32, int64,   | a key listed twice keeps its last value;           | float32), same     |
// | any shape              | default_value; values saturate to dtype            | shape and layout   |
//
// GPU: the table goes to device memory once (first Setup) and stays put; one launch per batch,
// capturable (SampleKernelOp).
#include <cstring>
#include <string>
#include <vector>

#include "core/memory/buffer.h"
#include "core/op/registry.h"
#include "core/tensor/copy.h"
#include "operators/image_common/image_args.h"
#include "operators/image_common/sample_kernel_op.h"
#include "operators/tensor/element_types.h"
#include "operators/tensor/lookup_table.h"
#include "operators/tensor/saturate.h"

namespace conveyor::ops {
namespace {

constexpr int64_t kMaxKey = 65535;  // the table is dense: one entry per key up to the largest

const std::vector<DType> kKeyDTypes(std::begin(kIndexDTypes), std::end(kIndexDTypes));

const OpSchema kSchema =
    OpSchema("lookup_table")
        .Doc("Maps integer keys to values through a table (keys -> values); other keys give default_value.")
        .Input("input", {}, kKeyDTypes, Placement::kOpDevice, "Keys.")
        .Output("output")
        .Arg<std::vector<int64_t>>("keys", {}, "The table's keys, each in [0, 65535].")
        .Arg<std::vector<double>>("values", {}, "The value of each key (as many as keys).")
        .Arg<double>("default_value", 0.0, "The value of keys not in the table.")
        .Arg<DType>("dtype", DType::kFloat32, "The output dtype (values saturate to it).")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class LookupTableOp final : public SampleKernelOp<LookupSample, LookupCpu, LookupGpu> {
 public:
  explicit LookupTableOp(const OpSpec& spec) : SampleKernelOp(spec), dtype_(spec.Arg<DType>("dtype")) {
    const std::vector<int64_t> keys = spec.Arg<std::vector<int64_t>>("keys");
    const std::vector<double> values = spec.Arg<std::vector<double>>("values");
    if (keys.size() != values.size()) {
      throw InvalidArgument(spec.Describe() + ": argument \"values\": expected one value per key (" +
                            std::to_string(keys.size()) + "), got " + std::to_string(values.size()));
    }
    int64_t size = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] < 0 || keys[i] > kMaxKey) {
        throw InvalidArgument(spec.Describe() + ": argument \"keys\": expected keys in [0, " + std::to_string(kMaxKey) +
                              "], got " + std::to_string(keys[i]) + " at index " + std::to_string(i));
      }
      size = std::max(size, keys[i] + 1);
    }
    const size_t element = DTypeSize(dtype_);
    table_.default_bits = SaturatedBits(spec.Arg<double>("default_value"), dtype_);
    table_.size = size;
    table_.out_size = static_cast<int64_t>(element);
    entries_.resize(static_cast<size_t>(size) * element);
    for (int64_t k = 0; k < size; ++k) std::memcpy(&entries_[static_cast<size_t>(k) * element], &table_.default_bits, element);
    for (size_t i = 0; i < keys.size(); ++i) {
      const uint64_t bits = SaturatedBits(values[i], dtype_);
      std::memcpy(&entries_[static_cast<size_t>(keys[i]) * element], &bits, element);
    }
  }

  OutputDescs Setup(const Workspace& ws) override {
    TensorListDesc out = ws.InputDesc(0);
    CheckInput(spec(), out, 0, {}, kKeyDTypes);
    out.dtype = dtype_;
    LookupSample table = table_;
    table.entries = ws.InputIsGpu(0) ? DeviceEntries(ws.stream()) : entries_.data();
    samples_.assign(out.shapes.size(), table);
    for (size_t i = 0; i < out.shapes.size(); ++i) samples_[i].count = out.shapes[i].num_elements();
    return {out};
  }

 private:
  // The table in device memory, copied once on the node's stream (Setup runs before any capture);
  // its address then stays put for every replay.
  const void* DeviceEntries(StreamView stream) {
    if (entries_.empty()) return nullptr;
    if (device_entries_.empty()) {
      device_entries_ = Buffer::Allocate(MemoryKind::kDevice, entries_.size(), stream);
      CopyBytesAsync(device_entries_.device_ptr(), entries_.data(), entries_.size(), stream);
    }
    return device_entries_.device_ptr();
  }

  DType dtype_;
  LookupSample table_{};          // entries, size, default and out_size: the same for every sample
  std::vector<uint8_t> entries_;  // host table: size entries of the output dtype
  Buffer device_entries_;
};

const OperatorRegistration<LookupTableOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
