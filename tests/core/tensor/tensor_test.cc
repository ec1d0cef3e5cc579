#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "core/cuda/check.h"
#include "core/tensor/copy.h"
#include "core/tensor/dtype.h"
#include "core/tensor/shape.h"
#include "core/tensor/tensor.h"
#include "core/tensor/tensor_list.h"
#include "tests/util/gpu_test.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(DType, NamesSizesAndParseRoundTrip) {
  for (DType d : kAllDTypes) {
    EXPECT_EQ(ParseDType(DTypeName(d)), d) << DTypeName(d);
    const auto dl = ToDLPackType(d);
    EXPECT_EQ(dl.bits, DTypeSize(d) * 8);
    EXPECT_EQ(FromDLPackType(dl.code, dl.bits, dl.lanes), d);
  }
  EXPECT_EQ(DTypeSize(DType::kFloat16), 2u);
  EXPECT_EQ(DTypeSize(DType::kInt64), 8u);
  EXPECT_EQ(ParseDType("f16"), DType::kFloat16);
  EXPECT_EQ(ParseDType("bf16"), DType::kBFloat16);
  EXPECT_EQ(ToDLPackType(DType::kBFloat16).code, 4);
  EXPECT_EQ(ToDLPackType(DType::kBool).code, 6);
  EXPECT_TRUE(IsFloatingPoint(DType::kBFloat16));
  EXPECT_FALSE(IsFloatingPoint(DType::kInt32));
}

TEST(DType, ParseErrorSuggestsAndLists) {
  EXPECT_THAT([] { ParseDType("flaot32"); },
              ThrowsMessage<InvalidArgument>(AllOf(HasSubstr("unknown dtype \"flaot32\""),
                                                   HasSubstr("did you mean \"float32\"?"),
                                                   HasSubstr("expected one of bool, uint8"))));
}

TEST(DType, NumpyTypestrs) {
  EXPECT_EQ(FromNumpyTypestr("<f4"), DType::kFloat32);
  EXPECT_EQ(FromNumpyTypestr("|u1"), DType::kUInt8);
  EXPECT_EQ(FromNumpyTypestr("<f2"), DType::kFloat16);
  EXPECT_EQ(FromNumpyTypestr("|b1"), DType::kBool);
  EXPECT_EQ(ToNumpyTypestr(DType::kInt64), "<i8");
  EXPECT_THAT([] { FromNumpyTypestr(">f4"); }, ThrowsMessage<InteropError>(HasSubstr("big-endian")));
  EXPECT_THAT([] { FromNumpyTypestr("<c8"); }, ThrowsMessage<InteropError>(HasSubstr("expected kind b, i, u or f")));
  EXPECT_THAT([] { FromNumpyTypestr("f"); }, ThrowsMessage<InteropError>(HasSubstr("such as \"<f4\"")));
  EXPECT_THAT([] { ToNumpyTypestr(DType::kBFloat16); }, ThrowsMessage<InteropError>(HasSubstr("no NumPy typestr")));
  EXPECT_THAT([] { FromDLPackType(2, 32, 4); }, ThrowsMessage<InteropError>(HasSubstr("lanes 4")));
}

TEST(Shape, ElementsStridesAndText) {
  Shape s{2, 3, 4};
  EXPECT_EQ(s.ndim(), 3);
  EXPECT_EQ(s.num_elements(), 24);
  EXPECT_EQ(RowMajorStrides(s), (Shape{12, 4, 1}));
  EXPECT_EQ(s.ToString(), "(2, 3, 4)");
  EXPECT_EQ(Shape{5}.ToString(), "(5,)");
  EXPECT_EQ(Shape{}.num_elements(), 1);
  EXPECT_EQ((Shape{3, 0, 2}).num_elements(), 0);
  Shape big;
  for (int i = 0; i < Shape::kMaxDims; ++i) big.push_back(1);
  EXPECT_THAT([&] { big.push_back(1); }, ThrowsMessage<InvalidArgument>(HasSubstr("at most 8 dimensions")));
}

TEST(Layout, FindAndValidation) {
  Layout l("HWC");
  EXPECT_EQ(l.find('W'), 1);
  EXPECT_EQ(l.find('N'), -1);
  EXPECT_THAT([] { Layout("HWH"); }, ThrowsMessage<InvalidArgument>(HasSubstr("axis 'H' appears twice")));
}

TEST(TensorCPU, ViewsChecksAndTypedAccess) {
  TensorCPU t = TensorCPU::Empty(Shape{4, 5}, DType::kInt32, std::nullopt, "HW");
  auto v = testing::RandomVector<int32_t>(20, -1000, 1000);
  std::memcpy(t.mutable_data<int32_t>(), v.data(), 80);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.nbytes(), 80u);
  EXPECT_EQ(t.layout().str(), "HW");
  // A transposed view through strides: element (i, j) of the view is (j, i) of t.
  TensorCPU tr = TensorCPU::FromBuffer(t.buffer(), 0, Shape{5, 4}, DType::kInt32, Shape{1, 5});
  EXPECT_FALSE(tr.is_contiguous());
  const int32_t* base = tr.data<int32_t>();
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(base[i * tr.strides()[0] + j * tr.strides()[1]], v[j * 5 + i]);
  EXPECT_THAT([&] { t.data<float>(); }, ThrowsMessage<InvalidArgument>(HasSubstr("expected dtype float32, got int32")));
  t.set_read_only(true);
  EXPECT_THAT([&] { t.mutable_data<int32_t>(); }, ThrowsMessage<InvalidArgument>(HasSubstr("read-only tensor")));
}

TEST(TensorCPU, RejectsViewsOutsideTheBuffer) {
  Buffer b = Buffer::Allocate(MemoryKind::kHost, 64);
  EXPECT_THAT([&] { TensorCPU::FromBuffer(b, 8, Shape{4, 4}, DType::kFloat32); },
              ThrowsMessage<InvalidArgument>(HasSubstr("outside the 64-byte buffer")));
  EXPECT_THAT([&] { TensorCPU::FromBuffer(b, 0, Shape{4}, DType::kFloat32, Shape{1, 1}); },
              ThrowsMessage<InvalidArgument>(HasSubstr("expected 1 strides")));
  EXPECT_NO_THROW(TensorCPU::FromBuffer(b, 0, Shape{4, 4}, DType::kFloat32));
  EXPECT_NO_THROW(TensorCPU::FromBuffer(b, 60, Shape{0, 7}, DType::kFloat32));  // zero-sized
}

TEST(TensorGPU, RejectsPageableHostMemory) {
  Buffer b = Buffer::Allocate(MemoryKind::kHost, 64);
  EXPECT_THAT([&] { TensorGPU::FromBuffer(b, 0, Shape{4}, DType::kFloat32); },
              ThrowsMessage<InvalidArgument>(HasSubstr("TensorGPU: expected device, managed or pinned memory")));
}

TEST(TensorList, VaryingShapesContiguousAlignedOffsets) {
  TensorListCPU list;
  std::vector<Shape> shapes = {{3, 5, 3}, {7, 2, 3}, {0, 4, 3}, {1, 1, 3}};
  list.Resize(shapes, DType::kUInt8);
  list.set_layout("HWC");
  EXPECT_EQ(list.num_samples(), 4);
  EXPECT_FALSE(list.is_uniform());
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(list.offset(i) % 16, 0);
    EXPECT_EQ(list[i].shape(), shapes[static_cast<size_t>(i)]);
    EXPECT_EQ(list[i].layout().str(), "HWC");
    if (i > 0) {
      EXPECT_GE(list.offset(i), list.offset(i - 1) + shapes[static_cast<size_t>(i - 1)].num_elements());
    }
  }
  // Shrinking reuses the buffer (no allocation in steady state).
  const Buffer before = list.buffer();
  list.Resize({{2, 2, 3}}, DType::kUInt8);
  EXPECT_TRUE(list.buffer() == before);
  EXPECT_TRUE(list.is_uniform());
  EXPECT_THAT([&] { list.Resize({{2, -1}}, DType::kUInt8); },
              ThrowsMessage<InvalidArgument>(HasSubstr("sample 0 has negative extent")));
  EXPECT_THAT([&] { list.SetBuffer(Buffer::Allocate(MemoryKind::kHost, 8), {{4, 4}}, DType::kUInt8); },
              ThrowsMessage<InvalidArgument>(HasSubstr("needs 16 bytes, the buffer has 8")));
}

TEST(CopyGpu, RoundTripThroughDeviceRecordsReadyEvents) {
  CONVEYOR_REQUIRE_GPU();
  cuda::Stream stream = cuda::Stream::Create();
  for (MemoryKind host_kind : {MemoryKind::kHost, MemoryKind::kPinned}) {
    SCOPED_TRACE(std::string(MemoryKindName(host_kind)));
    TensorCPU src = TensorCPU::Empty(Shape{37, 129}, DType::kFloat32, std::nullopt, {}, host_kind);
    auto v = testing::RandomVector<float>(37 * 129, -1.f, 1.f);
    std::memcpy(src.mutable_data<float>(), v.data(), v.size() * 4);
    TensorGPU dev = TensorGPU::Empty(src.shape(), src.dtype(), stream.view());
    TensorGPU dev2 = TensorGPU::Empty(src.shape(), src.dtype(), stream.view());
    TensorCPU back = TensorCPU::Empty(src.shape(), src.dtype(), std::nullopt, {}, MemoryKind::kPinned);
    std::fill_n(back.mutable_data<float>(), v.size(), -1e30f);
    CopyAsync(dev, src, stream.view());
    ASSERT_TRUE(dev.ready_event());
    CopyAsync(dev2, dev, stream.view());
    CopyAsync(back, dev2, stream.view());
    back.ready_event()->Synchronize();
    EXPECT_EQ(std::memcmp(back.data<float>(), v.data(), v.size() * 4), 0);
  }
}

TEST(CopyGpu, ConsumerStreamWaitsForProducerEvent) {
  CONVEYOR_REQUIRE_GPU();
  cuda::Stream producer = cuda::Stream::Create();
  cuda::Stream consumer = cuda::Stream::Create();
  const size_t n = 1 << 22;
  TensorCPU src = TensorCPU::Empty(Shape{static_cast<int64_t>(n)}, DType::kUInt8, std::nullopt, {}, MemoryKind::kPinned);
  auto v = testing::RandomVector<uint8_t>(n, 0, 255);
  std::memcpy(src.mutable_data<uint8_t>(), v.data(), n);
  TensorGPU a = TensorGPU::Empty(src.shape(), src.dtype(), producer.view());
  CopyAsync(a, src, producer.view());  // a's ready event is on the producer stream
  TensorCPU out = TensorCPU::Empty(src.shape(), src.dtype(), std::nullopt, {}, MemoryKind::kPinned);
  std::memset(out.mutable_data<uint8_t>(), 0xAB, n);
  CopyAsync(out, a, consumer.view());  // must wait for the producer's copy
  consumer.Synchronize();
  EXPECT_EQ(std::memcmp(out.data<uint8_t>(), v.data(), n), 0);
}

TEST(CopyGpu, TensorListBatchRoundTrip) {
  CONVEYOR_REQUIRE_GPU();
  cuda::Stream stream = cuda::Stream::Create();
  TensorListCPU src;
  src.Resize({{13, 7}, {1, 200}, {64, 3}}, DType::kInt16, std::nullopt, MemoryKind::kPinned);
  std::vector<std::vector<int16_t>> values;
  for (int i = 0; i < src.num_samples(); ++i) {
    values.push_back(testing::RandomVector<int16_t>(static_cast<size_t>(src.shape(i).num_elements()), -30000, 30000));
    std::memcpy(src.raw_sample(i), values.back().data(), values.back().size() * 2);
  }
  TensorListGPU dev;
  CopyAsync(dev, src, stream.view());
  TensorListCPU back;
  back.Resize(src.shapes(), src.dtype(), std::nullopt, MemoryKind::kPinned);
  CopyAsync(back, dev, stream.view());
  stream.Synchronize();
  for (int i = 0; i < back.num_samples(); ++i) {
    EXPECT_EQ(back.shape(i), src.shape(i));
    EXPECT_EQ(std::memcmp(back.raw_sample(i), values[static_cast<size_t>(i)].data(), values[static_cast<size_t>(i)].size() * 2), 0);
  }
}

TEST(Copy, MismatchedShapesAreRejected) {
  TensorCPU a = TensorCPU::Empty(Shape{4}, DType::kFloat32);
  TensorCPU b = TensorCPU::Empty(Shape{5}, DType::kFloat32);
  EXPECT_THAT([&] { CopyAsync(a, b, cuda::StreamView::PerThread()); },
              ThrowsMessage<InvalidArgument>(HasSubstr("destination (4,) float32 and source (5,) float32")));
}

}  // namespace
}  // namespace conveyor
