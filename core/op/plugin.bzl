"""Building Conveyor plugins with Bazel.

headers_only: the compile context (headers, includes, defines) of some cc targets without their
objects, so a plugin compiles against Conveyor's headers and leaves its symbols undefined; they
resolve from the host executable (linked -rdynamic) at load time.

conveyor_plugin: a plugin shared library from C++ sources plus optional CUDA sources.
"""

load("//bazel:cuda.bzl", "cuda_library")

def _headers_only_impl(ctx):
    merged = cc_common.merge_cc_infos(cc_infos = [d[CcInfo] for d in ctx.attr.deps])
    return [CcInfo(compilation_context = merged.compilation_context)]

headers_only = rule(
    implementation = _headers_only_impl,
    attrs = {"deps": attr.label_list(providers = [CcInfo])},
)

def conveyor_plugin(name, srcs, cuda_srcs = [], hdrs = [], deps = [], **kwargs):
    """lib<name>.so: srcs (C++) and cuda_srcs (.cu, through nvcc) against the plugin SDK.

    cudart is linked statically into the plugin (its symbols are hidden in the host, so the plugin
    needs its own copy); Conveyor's symbols stay undefined.
    """
    objs = []
    if cuda_srcs:
        cuda_library(
            name = name + "_gpu",
            srcs = cuda_srcs,
            hdrs = hdrs,
            deps = deps + ["//core/op:plugin_sdk"],
            visibility = ["//visibility:private"],
        )

        # The nvcc objects alone: cuda_library's cc_library would add nothing else we want.
        objs = [":" + name + "_gpu_cuda_objs"]
    native.cc_binary(
        name = "lib" + name + ".so",
        srcs = srcs + hdrs + objs,
        deps = deps + ["//core/op:plugin_sdk", "@cuda//:cudart_static"],
        linkshared = True,
        **kwargs
    )
