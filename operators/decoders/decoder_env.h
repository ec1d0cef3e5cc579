// The decoder's measuring switches from the environment, for tools only (the CLI, benchmarks,
// the GPU tests' tools): libraries and pipelines never read the environment. A tool applies them to
// options it makes itself (ApplyDecoderEnv) or to every decoder the process makes afterwards
// (SetDecoderOptionsHook(ApplyDecoderEnv), gpu_decoder.h).
//
// | variable                     | values (default)                 | option                        |
// |------------------------------|----------------------------------|-------------------------------|
// | CONVEYOR_JPEG_ENGINES        | 0 off, 1 on (1)                  | engines                       |
// | CONVEYOR_JPEG_ENGINE_THREADS | 1-4 (2)                          | engine_threads                |
// | CONVEYOR_JPEG_ENGINE_PARTS_TUNED | 0 always those, 1 tuned (1) | engine_parts_tuned            |
// | CONVEYOR_JPEG_SHARE_TUNED    | 0 balance, 1 balance vs engines (0)| engines_share_tuned         |
// | CONVEYOR_JPEG_ENGINES_WAIT   | 0 no host wait, 1 wait (1)       | engines_wait                  |
// | CONVEYOR_JPEG_HW_PIPELINE    | 0 NO_PIPELINE flag (0), 1 nvJPEG's| engines_pipeline             |
// | CONVEYOR_JPEG_PREALLOC_GROW  | 0 once, 1 per larger batch (0)   | engines_prealloc_grow         |
// | CONVEYOR_JPEG_PREALLOC_ALL   | 0 the 4:2:0 call, 1 every call(0)| engines_prealloc_all          |
// | CONVEYOR_JPEG_PREALLOC_AREA  | 0 width x height, 1 square (0)   | engines_prealloc_by_area      |
// | CONVEYOR_JPEG_PREALLOC_TYPICAL | 0 largest, 1 median image (0)  | engines_prealloc_typical      |
// | CONVEYOR_JPEG_MEMORY_POOLS   | 0 default, 1 ENABLE_MEMORY_POOLS | engines_memory_pools          |
// | CONVEYOR_JPEG_CUDA_PINNED    | 2-16 (2)                         | cuda_pinned_buffers           |
// | CONVEYOR_JPEG_CUDA_STATES    | 1-16 (1)                         | cuda_states                   |
// | CONVEYOR_JPEG_CUDA_SHARED_KPIXELS | 0 off, 1-1000000 (0)        | cuda_shared_pixels / 1000     |
// | CONVEYOR_JPEG_CUDA_SHARED_STATES  | 1-16 (2)                    | cuda_shared_states            |
// | CONVEYOR_JPEG_PINNED_HIGH_WATER_MB | 0 off, 1-4096 MiB (0)      | cuda_pinned_high_water_mb     |
// | CONVEYOR_JPEG_TRACE          | 0-1000 (0)                       | trace_calls                   |
// | CONVEYOR_JPEG_TRACE_FROM     | 0-1000000 (20)                   | trace_from                    |
// | CONVEYOR_JPEG_PROGRESSIVE    | cpu, cuda (the option's)         | progressive                   |
// | CONVEYOR_JPEG_OTHER_CHROMA   | engines_own_call, cuda, cpu      | other_chroma                  |
// | CONVEYOR_JPEG_PROGRESSIVE_CPU_KPIXELS | 0-1000000 (0)           | progressive_cpu_pixels / 1000 |
// | CONVEYOR_JPEG_CHECK_BESIDE   | 0 phase A (0), 1 beside phase B  | engines_check_beside          |
// | CONVEYOR_JPEG_ENGINES_CHECK  | always, common (default), never  | engines_check                 |
// | CONVEYOR_JPEG_COSTLIEST_FIRST| 0 TBB chunks, 1 one queue (1)    | host_costliest_first          |
// | CONVEYOR_JPEG_ENGINES_IMAGE_KPIXELS | 0-100000 (0)             | engines_image_cost_px / 1000  |
// | CONVEYOR_JPEG_ENGINES_CALL_KPIXELS  | 0-1000000 (0)            | engines_call_cost_px / 1000   |
// | CONVEYOR_JPEG_ENGINES_ONLY_KPIXELS | 0-1000000 (0: off)         | engines_only_pixels / 1000    |
// | CONVEYOR_JPEG_OTHER_ENGINES_KPIXELS | 0-1000000 (0: off)        | other_engines_pixels / 1000   |
// | CONVEYOR_JPEG_LARGE_KPIXELS  | 1-1000000 (the option's / 1000)  | large_pixels / 1000           |
// | CONVEYOR_JPEG_HYBRID_KPIXELS | 0-1000000 (the option's / 1000)  | hybrid_huffman_threshold/1000 |
// | CONVEYOR_JPEG_PROGRESSIVE_HYBRID_KPIXELS | 0-1000000 (unset)   | progressive_huffman_threshold |
// | CONVEYOR_JPEG_AHEAD_KPIXELS  | 0 off, 1-1000000 (the option's)  | ahead_cost / 1000             |
// | CONVEYOR_JPEG_AHEAD_BALANCED_KPIXELS | 0 off, 1-1000000 (the option's) | ahead_balanced_pixels / 1000 |
// | CONVEYOR_JPEG_AHEAD_IMAGES   | 1-64 (the option's)              | ahead_images                  |
// | CONVEYOR_JPEG_AHEAD_THREADS  | 1-16 (the option's)              | ahead_threads                 |
// | CONVEYOR_JPEG_AHEAD_BUFFERS  | 1-64 (the option's)              | ahead_buffers                 |
// | CONVEYOR_JPEG_HW_LOAD        | -1 automatic, or 0-1 (option's)  | hw_load                       |
// | CONVEYOR_NVJPEG2K_PATH       | a library file (the search)      | nvjpeg2k_path                 |
// Unset leaves the option as it is. A value outside these is refused (Error naming the variable,
// what each value means and what came).
#pragma once

#include "operators/decoders/gpu_decoder.h"

namespace conveyor::ops {

void ApplyDecoderEnv(GpuDecoderOptions& options);

}  // namespace conveyor::ops
