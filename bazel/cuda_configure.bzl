"""Repository rule: the local CUDA toolkit (CUDA_PATH, default /usr/local/cuda). Nothing is downloaded."""

def _cuda_configure_impl(rctx):
    path = rctx.os.environ.get("CUDA_PATH", "/usr/local/cuda")
    if not rctx.path(path + "/bin/nvcc").exists:
        fail("CUDA toolkit not found: expected nvcc at %s/bin/nvcc (set CUDA_PATH)" % path)
    for d in ["bin", "include", "lib64", "nvvm"]:
        rctx.symlink(path + "/" + d, d)
    rctx.file("BUILD", rctx.read(rctx.attr._build_file))

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    attrs = {"_build_file": attr.label(default = "//bazel:cuda.BUILD")},
    environ = ["CUDA_PATH"],
    local = True,
)
