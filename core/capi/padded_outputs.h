// A pipeline output of differently shaped samples as one padded tensor and the samples' shapes
// (conveyor_outputs_get_padded). pad_batch.h has the copy itself.
#pragma once

#include "core/cuda/stream.h"
#include "core/interop/any_tensor.h"
#include "core/tensor/tensor.h"
#include "core/tensor/tensor_list.h"

namespace conveyor::capi {

struct PaddedBatch {
  interop::AnyTensor data;  // [samples, max extents...], new memory of the list's side
  TensorCPU lengths;        // int64 [samples], host: each sample's first extent (1 for scalars)
  TensorCPU shapes;         // int64 [samples, ndim], host
};

// Host samples (CPU or pinned, waited for on the host): padded on the host.
PaddedBatch PadList(const TensorListCPU& list, double pad_value);
// Device samples: padded on the device, on `stream` (after the list's ready event); the data's
// ready event is recorded there.
PaddedBatch PadList(const TensorListGPU& list, double pad_value, StreamView stream);

}  // namespace conveyor::capi
