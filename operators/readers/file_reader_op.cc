// readers.file: encoded files (JPEG, PNG, anything) and their labels.
//
// | output | dtype | shape per sample | content                              |
// |--------|-------|------------------|--------------------------------------|
// | 0      | uint8 | [file size]      | the file's bytes                     |
// | 1      | int32 | [1]              | the label (see dataset.h for sources)|
//
// Sharding, shuffling, padding and epochs: reader_core.h.
#include "core/op/registry.h"
#include "operators/common/image_formats.h"
#include "operators/readers/reader_op.h"

namespace conveyor::ops {
namespace {

const OpSchema kFileReaderSchema =
    WithReaderArgs(OpSchema("readers.file")
                       .Doc("Reads whole files (encoded images or any bytes) with their labels, sharded and "
                            "shuffled per epoch.")
                       .Output("data", "uint8 [file size]: the file's bytes.")
                       .Output("labels", "int32 [1]: the sample's label."),
                   DecodableImageFilters());

class FileReaderOp final : public ReaderOp {
 public:
  explicit FileReaderOp(const OpSpec& spec) : ReaderOp(spec, /*class_folders=*/true) {}

 protected:
  OutputDescs SetupSamples(const Workspace& ws, const std::vector<OpenFile>& files) override {
    (void)ws;
    TensorListDesc data{{}, DType::kUInt8, {}}, labels{{}, DType::kInt32, {}};
    for (const OpenFile& f : files) {
      data.shapes.push_back(Shape{f.size});
      labels.shapes.push_back(Shape{1});
    }
    return {data, labels};
  }

  bool OutputIsFileBytes(int output) const override { return output == 0; }

  void ReadSample(Workspace& ws, int i, const OpenFile& file) override {
    TensorListCPU& data = ws.OutputCpu(0);
    ReadExactly(file, data.raw_sample(i), file.size, 0);
    *static_cast<int32_t*>(ws.OutputCpu(1).raw_sample(i)) = dataset().labels[static_cast<size_t>(file.index)];
  }
};

const OperatorRegistration<FileReaderOp> kRegistration(kFileReaderSchema);

}  // namespace
}  // namespace conveyor::ops
