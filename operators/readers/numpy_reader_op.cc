// readers.numpy: .npy arrays (format 1.0, 2.0, 3.0; npy_format.h), one per sample.
//
// | output | dtype            | shape per sample | content                                   |
// |--------|------------------|------------------|-------------------------------------------|
// | 0      | the files' dtype | the array's      | C order (Fortran-order files transposed)  |
//
// Every array of a batch must have the same dtype (a batch has one); a mismatch names both files.
// `layout` (e.g. HWC) labels the output so that image operators, which check their input's layout,
// take the arrays; every array must then have one dimension per letter (else: the file, its shape).
// Sharding, shuffling, padding and epochs: reader_core.h.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/op/registry.h"
#include "operators/readers/npy_format.h"
#include "operators/readers/reader_op.h"

namespace conveyor::ops {
namespace {

const OpSchema kNumpyReaderSchema =
    WithReaderArgs(OpSchema("readers.numpy")
                       .Doc("Reads .npy arrays (NumPy format 1.0-3.0, C or Fortran order), sharded and shuffled "
                            "per epoch. Fortran-order arrays are transposed to C order.")
                       .Output("data", "The array, in C order.")
                       .Arg<std::string>("layout", "",
                                         "Layout of the arrays, given to the output (e.g. HWC for images, so that "
                                         "image operators take them); every array must have one dimension per "
                                         "letter. Empty: none."),
                   {"*.npy"});

Layout ParseLayoutArg(const OpSpec& spec) {
  const std::string text = spec.Arg<std::string>("layout");
  try {
    return Layout(text);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(spec.Describe() + ": argument \"layout\": " + e.what());
  }
}

// Copies a Fortran-order array (first index fastest) into C order (last index fastest).
void FortranToC(char* dst, const char* src, const Shape& shape, size_t item) {
  const int nd = shape.ndim();
  const int64_t n = shape.num_elements();
  std::vector<int64_t> fstride(static_cast<size_t>(nd), 1), idx(static_cast<size_t>(nd), 0);
  for (int d = 1; d < nd; ++d) fstride[static_cast<size_t>(d)] = fstride[static_cast<size_t>(d - 1)] * shape[d - 1];
  int64_t src_off = 0;
  for (int64_t i = 0; i < n; ++i) {  // i walks C order; src_off follows in Fortran order
    std::copy_n(src + src_off * static_cast<int64_t>(item), item, dst + i * static_cast<int64_t>(item));
    for (int d = nd - 1; d >= 0; --d) {
      const size_t k = static_cast<size_t>(d);
      if (++idx[k] < shape[d]) {
        src_off += fstride[k];
        break;
      }
      src_off -= fstride[k] * (shape[d] - 1);
      idx[k] = 0;
    }
  }
}

class NumpyReaderOp final : public ReaderOp {
 public:
  explicit NumpyReaderOp(const OpSpec& spec)
      : ReaderOp(spec, /*class_folders=*/false), layout_(ParseLayoutArg(spec)) {}

 protected:
  OutputDescs SetupSamples(const Workspace& ws, const std::vector<OpenFile>& files) override {
    headers_.assign(files.size(), NpyHeader{});
    ws.ParallelFor(static_cast<int64_t>(files.size()), 8, [&](int64_t begin, int64_t end) {
      std::vector<char> head;
      for (int64_t i = begin; i < end; ++i) headers_[static_cast<size_t>(i)] = ReadHeader(files[static_cast<size_t>(i)], head);
    });
    TensorListDesc desc{{}, headers_.empty() ? DType::kUInt8 : headers_[0].dtype, layout_};
    for (size_t i = 0; i < headers_.size(); ++i) {
      if (headers_[i].dtype != desc.dtype) {
        throw InvalidArgument(FileWhere(files[i].index) + ": dtype " + std::string(DTypeName(headers_[i].dtype)) +
                              " differs from " + std::string(DTypeName(desc.dtype)) + " of \"" + batch_paths()[0] +
                              "\" in the same batch (a batch has one dtype)");
      }
      if (!layout_.empty() && headers_[i].shape.ndim() != layout_.ndim()) {
        throw InvalidArgument(FileWhere(files[i].index) + ": array of shape " + headers_[i].shape.ToString() + " has " +
                              std::to_string(headers_[i].shape.ndim()) + " dimensions; argument \"layout\" " +
                              std::string(layout_.str()) + " needs " + std::to_string(layout_.ndim()));
      }
      desc.shapes.push_back(headers_[i].shape);
    }
    return {desc};
  }

  void ReadSample(Workspace& ws, int i, const OpenFile& file) override {
    const NpyHeader& h = headers_[static_cast<size_t>(i)];
    char* dst = static_cast<char*>(ws.OutputCpu(0).raw_sample(i));
    if (!h.fortran_order || h.shape.ndim() < 2) {
      ReadExactly(file, dst, h.data_bytes(), h.data_offset);
      return;
    }
    std::vector<char> fortran(static_cast<size_t>(h.data_bytes()));
    ReadExactly(file, fortran.data(), h.data_bytes(), h.data_offset);
    FortranToC(dst, fortran.data(), h.shape, DTypeSize(h.dtype));
  }

 private:
  NpyHeader ReadHeader(const OpenFile& file, std::vector<char>& head) const {
    const std::string where = FileWhere(file.index);
    head.resize(static_cast<size_t>(std::min<int64_t>(file.size, 256)));
    ReadExactly(file, head.data(), static_cast<int64_t>(head.size()), 0);
    const size_t need = NpyHeaderLength(head.data(), head.size(), where);
    if (need > head.size()) {
      if (static_cast<int64_t>(need) > file.size) {
        throw InvalidArgument(where + ": truncated .npy header (expected " + std::to_string(need) +
                              " bytes, the file has " + std::to_string(file.size) + ")");
      }
      head.resize(need);
      ReadExactly(file, head.data(), static_cast<int64_t>(need), 0);
    }
    NpyHeader h = ParseNpyHeader(head.data(), head.size(), where);
    if (h.data_offset + h.data_bytes() > file.size) {
      throw InvalidArgument(where + ": truncated data: the header promises " + std::to_string(h.data_bytes()) +
                            " bytes (" + std::string(DTypeName(h.dtype)) + " " + h.shape.ToString() +
                            "), the file holds " + std::to_string(file.size - h.data_offset));
    }
    return h;
  }

  Layout layout_;                   // from the argument; empty: none
  std::vector<NpyHeader> headers_;  // the current batch's, between Setup and RunCpu
};

const OperatorRegistration<NumpyReaderOp> kRegistration(kNumpyReaderSchema);

}  // namespace
}  // namespace conveyor::ops
