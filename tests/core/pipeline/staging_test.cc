// Slot-buffer growth (core/pipeline/staging.h): the capacity a batch gets, and Place() keeping a
// buffer (same address) while batches fit and growing it geometrically when one does not.
#include "core/pipeline/staging.h"

#include <gtest/gtest.h>

#include <vector>

namespace conveyor::pipeline_internal {
namespace {

TEST(SlotCapacity, OneEighthAboveTheBatchAtLeastOneQuarterAboveTheOldBuffer) {
  EXPECT_EQ(CapacityFor(0), 256u);
  EXPECT_EQ(CapacityFor(1), 256u);
  EXPECT_EQ(CapacityFor(256), 512u);  // 288 rounded up to 256 bytes
  // A 224x224x3 float16 batch of 256: 73.5 MiB gets 82.7 MiB (a power of two took 128 MiB).
  const size_t batch = size_t{256} * 3 * 224 * 224 * 2;
  EXPECT_EQ(CapacityFor(batch), batch + batch / 8);
  // Growing just past the old buffer: a quarter above it (1,250,000 -> 4,883 x 256), not just above
  // the batch.
  EXPECT_EQ(CapacityFor(1'000'001, 1'000'000), 1'250'048u);
  // Far past it: an eighth above the batch (4,500,000 -> 17,579 x 256).
  EXPECT_EQ(CapacityFor(4'000'000, 1'000'000), 4'500'224u);
}

TEST(SlotCapacity, PlaceKeepsTheBufferWhileBatchesFitAndGrowsGeometrically) {
  TensorListCPU list;
  const std::vector<Shape> small(4, Shape{100, 10});  // 4 x 4,000 bytes of float
  ASSERT_TRUE(Place(list, small, DType::kFloat32, MemoryKind::kHost, std::nullopt));
  const size_t first = list.buffer().size();
  EXPECT_EQ(first, CapacityFor(BatchBytes(small, DType::kFloat32)));
  const void* at = list.buffer().data();
  // Smaller and equal batches stay in the same buffer.
  EXPECT_FALSE(Place(list, std::vector<Shape>(3, Shape{100, 10}), DType::kFloat32, MemoryKind::kHost, std::nullopt));
  EXPECT_FALSE(Place(list, small, DType::kFloat32, MemoryKind::kHost, std::nullopt));
  EXPECT_EQ(list.buffer().data(), at);
  EXPECT_EQ(list.num_samples(), 4);
  // One sample more than the headroom: a new buffer at least a quarter larger.
  const std::vector<Shape> five(5, Shape{100, 10});
  ASSERT_GT(BatchBytes(five, DType::kFloat32), first);
  EXPECT_TRUE(Place(list, five, DType::kFloat32, MemoryKind::kHost, std::nullopt));
  EXPECT_GE(list.buffer().size(), first + first / 4);
  EXPECT_GE(list.buffer().size(), BatchBytes(five, DType::kFloat32));
}

TEST(SlotCapacity, NegativeExtentIsRefusedWithTheSample) {
  try {
    BatchBytes({Shape{2, 2}, Shape{3, -1}}, DType::kUInt8);
    FAIL() << "accepted a negative extent";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("sample 1 has a negative extent"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace conveyor::pipeline_internal
