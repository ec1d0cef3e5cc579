"""cuda_library: nvcc compiles .cu files into objects that an ordinary cc_library links.

The architecture list lives here, in one place. cudart is linked statically (@cuda//:cudart_static),
so binaries need nothing but the driver on a GPU machine.
"""

# SASS for Ampere and Hopper plus compute_90 PTX so newer GPUs can JIT.
CUDA_GENCODE = [
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90,code=[sm_90,compute_90]",
]

# Sanitizer builds (--config=asan / tsan, .bazelrc) never run their kernels: no GPU where CI runs
# them. `--define=cuda_compile_only=1` compiles one SASS architecture at -O1 there, about half
# the nvcc time of the two-architecture build; the kernels' code is still compiled and checked.
CUDA_GENCODE_COMPILE_ONLY = ["-gencode=arch=compute_90,code=sm_90"]

CUDA_COPTS = [
    "-std=c++20",
    "-O3",
    "-Xcompiler=-fPIC,-Wall,-Wextra",
    "--expt-relaxed-constexpr",
    "-Werror=all-warnings",
]

def _cuda_objects_impl(ctx):
    nvcc = ctx.file._nvcc
    compilation_contexts = [dep[CcInfo].compilation_context for dep in ctx.attr.deps if CcInfo in dep]
    headers = depset(ctx.files.hdrs, transitive = [c.headers for c in compilation_contexts])
    include_dirs = depset(
        [".", ctx.bin_dir.path, ctx.genfiles_dir.path],
        transitive = [c.includes for c in compilation_contexts] +
                     [c.quote_includes for c in compilation_contexts] +
                     [c.system_includes for c in compilation_contexts],
    )
    defines = depset(transitive = [c.defines for c in compilation_contexts])
    outputs = []
    for src in ctx.files.srcs:
        stem = src.basename[:-len(src.extension) - 1]
        pic_obj = ctx.actions.declare_file("_cuda_objs/%s/%s.pic.o" % (ctx.label.name, stem))
        args = ctx.actions.args()
        compile_only = ctx.var.get("cuda_compile_only", "0") == "1"
        args.add_all([("-O1" if compile_only and c == "-O3" else c) for c in CUDA_COPTS])
        if ctx.attr.gencode:
            args.add_all(ctx.attr.gencode)
        else:
            args.add_all(CUDA_GENCODE_COMPILE_ONLY if compile_only else CUDA_GENCODE)
        args.add_all(ctx.attr.copts)
        args.add_all(include_dirs, format_each = "-I%s")
        args.add_all(defines, format_each = "-D%s")
        args.add_all(["-x", "cu", "-c", src.path, "-o", pic_obj.path])
        ctx.actions.run(
            executable = nvcc,
            arguments = [args],
            inputs = depset([src], transitive = [headers, ctx.attr._cuda_files.files]),
            outputs = [pic_obj],
            mnemonic = "NvccCompile",
            progress_message = "nvcc %s" % src.short_path,
            use_default_shell_env = True,
        )
        outputs.append(pic_obj)
    return [DefaultInfo(files = depset(outputs))]

_cuda_objects = rule(
    implementation = _cuda_objects_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = [".cu"]),
        "hdrs": attr.label_list(allow_files = True),
        "deps": attr.label_list(providers = [CcInfo]),
        "copts": attr.string_list(),
        "gencode": attr.string_list(),
        "_nvcc": attr.label(default = "@cuda//:bin/nvcc", allow_single_file = True),
        "_cuda_files": attr.label(default = "@cuda//:toolkit_files"),
    },
)

def cuda_library(name, srcs, hdrs = [], deps = [], copts = [], gencode = [], **kwargs):
    """A cc_library whose .cu sources are compiled by nvcc; use it like a cc_library."""
    _cuda_objects(
        name = name + "_cuda_objs",
        srcs = srcs,
        hdrs = hdrs,
        deps = deps + ["@cuda//:headers"],
        copts = copts,
        gencode = gencode,
        visibility = ["//visibility:private"],
    )
    native.cc_library(
        name = name,
        srcs = [":" + name + "_cuda_objs"],
        hdrs = hdrs,
        deps = deps + ["@cuda//:cudart_static"],
        **kwargs
    )
