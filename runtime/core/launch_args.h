// Launch checks every backend shares: arguments against the kernel's parameters (count, kind,
// scalar type, whole elements) and a launch geometry without zero extents.
#pragma once

#include "hologram/isa/launch.h"
#include "hologram/isa/program.h"
#include "hologram/runtime/backend.h"

#include <span>
#include <string>

namespace hologram::runtime {

/// "argument 2 (%b) of kernel 'k'"
inline std::string argument_name(const isa::Kernel &kernel, size_t i) {
  return "argument " + std::to_string(i + 1) + " (%" + kernel.params[i].name + ") of kernel '" +
         kernel.name + "'";
}

/// Throws Error(InvalidArgument) unless `args` fit `kernel`'s parameters. `buffer_bytes(a)`
/// returns the size of buffer argument a, the view's when it is one (and throws for an unknown
/// handle or a view outside its buffer); pools are resolved by the caller.
template <typename BufferBytes>
void check_launch_args(const isa::Kernel &kernel, std::span<const KernelArg> args,
                       BufferBytes &&buffer_bytes) {
  if (args.size() != kernel.params.size())
    throw Error(ErrorCode::InvalidArgument, "kernel '" + kernel.name + "' expects " +
                                                std::to_string(kernel.params.size()) +
                                                " argument(s), got " + std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const auto &p = kernel.params[i];
    const auto &a = args[i];
    switch (p.kind) {
    case isa::ParamKind::Buffer: {
      if (a.kind != KernelArg::Kind::Buffer)
        throw Error(ErrorCode::InvalidArgument, argument_name(kernel, i) + " must be a buffer");
      uint64_t bytes = buffer_bytes(a);
      if (a.offset % isa::type_size(p.type) != 0)
        throw Error(ErrorCode::InvalidArgument,
                    argument_name(kernel, i) + ": a view of buffer #" + std::to_string(a.handle) +
                        " at byte " + std::to_string(a.offset) + " does not start on a " +
                        std::string(isa::type_name(p.type)) + " element");
      if (bytes % isa::type_size(p.type) != 0)
        throw Error(ErrorCode::InvalidArgument,
                    argument_name(kernel, i) + ": " + (a.is_view() ? "a view of " : "") +
                        "buffer #" + std::to_string(a.handle) + " holds " + std::to_string(bytes) +
                        " bytes, not a whole number of " + std::string(isa::type_name(p.type)) +
                        " elements");
      break;
    }
    case isa::ParamKind::Pool:
      if (a.kind != KernelArg::Kind::Pool)
        throw Error(ErrorCode::InvalidArgument, argument_name(kernel, i) + " must be a pool");
      if (a.is_view())
        throw Error(ErrorCode::InvalidArgument,
                    argument_name(kernel, i) + " is a pool, which is passed whole (views are of "
                                               "buffers)");
      break;
    case isa::ParamKind::Scalar:
      if (a.kind != KernelArg::Kind::Scalar)
        throw Error(ErrorCode::InvalidArgument, argument_name(kernel, i) + " must be a scalar");
      if (a.type != p.type)
        throw Error(ErrorCode::InvalidArgument,
                    argument_name(kernel, i) + " is " + std::string(isa::type_name(p.type)) +
                        ", got " +
                        (a.type == isa::Type::None ? std::string("an untyped value")
                                                   : std::string(isa::type_name(a.type))));
      break;
    }
  }
}

/// Throws Error(InvalidArgument) when a kernel compiled with --block (`block`, {0, 0, 0} when
/// not) is launched with another block size.
inline void check_compiled_block(const isa::Kernel &kernel, std::span<const uint32_t, 3> block,
                                 const LaunchConfig &launch) {
  if (block[0] == 0 ||
      (launch.block.x == block[0] && launch.block.y == block[1] && launch.block.z == block[2]))
    return;
  auto xyz = [](uint32_t x, uint32_t y, uint32_t z) {
    return std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z);
  };
  throw Error(ErrorCode::InvalidArgument,
              "kernel '" + kernel.name +
                  "' was compiled with --block=" + xyz(block[0], block[1], block[2]) +
                  "; the launch's block is " + xyz(launch.block.x, launch.block.y, launch.block.z));
}

inline void check_launch_geometry(const isa::Kernel &kernel, const LaunchConfig &launch) {
  if (launch.grid.count() == 0 || launch.block.count() == 0)
    throw Error(ErrorCode::InvalidArgument,
                "kernel '" + kernel.name + "': launch with a zero-size grid or block dimension");
}

} // namespace hologram::runtime
