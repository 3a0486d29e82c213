// VulkanBackend. The loader is opened with dlopen, so applications linking the runtime start
// on machines without Vulkan. Launches and copies are serialised on the one queue and return
// when they have finished, so synchronize() has nothing left to wait for.
#include "vulkan_backend.h"

#include "../core/dynamic_library.h"
#include "../core/handle_table.h"
#include "../core/host_atlas.h"
#include "../core/idle_list.h"
#include "../core/launch_args.h"
#include "../core/spirv_backend.h"
#include "hologram/artifact/bundle.h"
#include "hologram/codegen/spirv_abi.h"
#include "hologram/isa/encoding.h"
#include "hologram/isa/text.h"

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <utility>

namespace hologram::runtime {

namespace {

// ---------------------------------------------------------------------------------------------
// The loader

#define HG_VK_INSTANCE_FUNCTIONS(X)                                                                \
  X(vkDestroyInstance)                                                                             \
  X(vkEnumeratePhysicalDevices)                                                                    \
  X(vkGetPhysicalDeviceProperties)                                                                 \
  X(vkGetPhysicalDeviceQueueFamilyProperties)                                                      \
  X(vkGetPhysicalDeviceMemoryProperties)                                                           \
  X(vkGetPhysicalDeviceFeatures2)                                                                  \
  X(vkGetPhysicalDeviceProperties2)                                                                \
  X(vkEnumerateDeviceExtensionProperties)                                                          \
  X(vkCreateDevice)                                                                                \
  X(vkGetDeviceProcAddr)

#define HG_VK_DEVICE_FUNCTIONS(X)                                                                  \
  X(vkDestroyDevice)                                                                               \
  X(vkGetDeviceQueue)                                                                              \
  X(vkCreateBuffer)                                                                                \
  X(vkDestroyBuffer)                                                                               \
  X(vkGetBufferMemoryRequirements)                                                                 \
  X(vkAllocateMemory)                                                                              \
  X(vkFreeMemory)                                                                                  \
  X(vkBindBufferMemory)                                                                            \
  X(vkMapMemory)                                                                                   \
  X(vkCreateShaderModule)                                                                          \
  X(vkDestroyShaderModule)                                                                         \
  X(vkCreateDescriptorSetLayout)                                                                   \
  X(vkDestroyDescriptorSetLayout)                                                                  \
  X(vkCreatePipelineLayout)                                                                        \
  X(vkDestroyPipelineLayout)                                                                       \
  X(vkCreateComputePipelines)                                                                      \
  X(vkDestroyPipeline)                                                                             \
  X(vkCreatePipelineCache)                                                                         \
  X(vkDestroyPipelineCache)                                                                        \
  X(vkCreateDescriptorPool)                                                                        \
  X(vkDestroyDescriptorPool)                                                                       \
  X(vkResetDescriptorPool)                                                                         \
  X(vkAllocateDescriptorSets)                                                                      \
  X(vkUpdateDescriptorSets)                                                                        \
  X(vkCreateCommandPool)                                                                           \
  X(vkDestroyCommandPool)                                                                          \
  X(vkAllocateCommandBuffers)                                                                      \
  X(vkResetCommandBuffer)                                                                          \
  X(vkBeginCommandBuffer)                                                                          \
  X(vkEndCommandBuffer)                                                                            \
  X(vkCmdBindPipeline)                                                                             \
  X(vkCmdBindDescriptorSets)                                                                       \
  X(vkCmdPushConstants)                                                                            \
  X(vkCmdDispatch)                                                                                 \
  X(vkCmdCopyBuffer)                                                                               \
  X(vkCmdFillBuffer)                                                                               \
  X(vkCmdPipelineBarrier)                                                                          \
  X(vkCreateFence)                                                                                 \
  X(vkDestroyFence)                                                                                \
  X(vkWaitForFences)                                                                               \
  X(vkResetFences)                                                                                 \
  X(vkQueueSubmit)                                                                                 \
  X(vkDeviceWaitIdle)

#define HG_VK_DECLARE(name) PFN_##name name = nullptr;

/// libvulkan and the global functions, opened once per process.
struct Loader {
  void *lib = nullptr;
  PFN_vkGetInstanceProcAddr get_instance_proc = nullptr;
  PFN_vkCreateInstance create_instance = nullptr;
  PFN_vkEnumerateInstanceVersion enumerate_version = nullptr;
  std::string error;

  static const Loader &get() {
    static const Loader loader = [] {
      Loader l;
      l.lib = open_library({"libvulkan.so.1", "libvulkan.so"}, "the Vulkan loader", l.error);
      if (!l.lib) return l;
      l.get_instance_proc =
          reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(l.lib, "vkGetInstanceProcAddr"));
      if (!l.get_instance_proc) {
        l.error = "libvulkan.so.1 has no vkGetInstanceProcAddr";
        return l;
      }
      l.create_instance =
          reinterpret_cast<PFN_vkCreateInstance>(l.get_instance_proc(nullptr, "vkCreateInstance"));
      l.enumerate_version = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
          l.get_instance_proc(nullptr, "vkEnumerateInstanceVersion"));
      if (!l.create_instance || !l.enumerate_version)
        l.error = "the Vulkan loader is older than Vulkan 1.1";
      return l;
    }();
    return loader;
  }
};

std::string vk_result_name(VkResult r) {
  // The results this backend can meet, by name (VkResult is the driver's enum, so a lookup
  // rather than a switch that -Wswitch-enum would ask to list all of it).
  static constexpr std::pair<VkResult, const char *> kNames[] = {
      {VK_ERROR_OUT_OF_HOST_MEMORY, "VK_ERROR_OUT_OF_HOST_MEMORY"},
      {VK_ERROR_OUT_OF_DEVICE_MEMORY, "VK_ERROR_OUT_OF_DEVICE_MEMORY"},
      {VK_ERROR_INITIALIZATION_FAILED, "VK_ERROR_INITIALIZATION_FAILED"},
      {VK_ERROR_DEVICE_LOST, "VK_ERROR_DEVICE_LOST"},
      {VK_ERROR_INCOMPATIBLE_DRIVER, "VK_ERROR_INCOMPATIBLE_DRIVER"},
      {VK_ERROR_FEATURE_NOT_PRESENT, "VK_ERROR_FEATURE_NOT_PRESENT"},
      {VK_ERROR_EXTENSION_NOT_PRESENT, "VK_ERROR_EXTENSION_NOT_PRESENT"},
      {VK_ERROR_INVALID_SHADER_NV, "VK_ERROR_INVALID_SHADER_NV"},
  };
  for (const auto &[code, name] : kNames)
    if (code == r) return name;
  return "VkResult " + std::to_string(static_cast<int>(r));
}

void check(VkResult r, const std::string &what) {
  if (r == VK_SUCCESS) return;
  ErrorCode code = r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY
                       ? ErrorCode::OutOfMemory
                       : ErrorCode::LaunchFailed;
  throw Error(code, "vulkan: " + what + " failed: " + vk_result_name(r));
}

std::string version_text(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

/// An instance and its functions.
struct Instance {
  VkInstance handle = VK_NULL_HANDLE;
  uint32_t api_version = VK_API_VERSION_1_1;
  HG_VK_INSTANCE_FUNCTIONS(HG_VK_DECLARE)

  /// The process's one instance, created on first use and kept for the process lifetime (the
  /// driver stays loaded, so creating backends again is cheap).
  static std::shared_ptr<Instance> shared(std::string &error) {
    static std::string saved_error;
    static auto *instance = new std::shared_ptr<Instance>(create(saved_error));
    error = saved_error;
    return *instance;
  }

  static std::shared_ptr<Instance> create(std::string &error) {
    const Loader &l = Loader::get();
    if (!l.error.empty()) {
      error = l.error;
      return nullptr;
    }
    uint32_t version = 0;
    l.enumerate_version(&version);
    auto inst = std::make_shared<Instance>();
    inst->api_version = std::min<uint32_t>(version, VK_API_VERSION_1_3);
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "hologram";
    app.pEngineName = "hologram";
    app.apiVersion = inst->api_version;
    VkInstanceCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ci.pApplicationInfo = &app;
    VkResult r = l.create_instance(&ci, nullptr, &inst->handle);
    if (r != VK_SUCCESS) {
      error = "vkCreateInstance failed: " + vk_result_name(r);
      return nullptr;
    }
#define HG_VK_LOAD_INSTANCE(name)                                                                  \
  inst->name = reinterpret_cast<PFN_##name>(l.get_instance_proc(inst->handle, #name));
    HG_VK_INSTANCE_FUNCTIONS(HG_VK_LOAD_INSTANCE)
#undef HG_VK_LOAD_INSTANCE
    return inst;
  }
  ~Instance() {
    if (handle && vkDestroyInstance) vkDestroyInstance(handle, nullptr);
  }
};

/// What a physical device offers, and why it cannot be used when it cannot.
struct Candidate {
  VkPhysicalDevice device = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props{};
  uint32_t queue_family = 0;
  std::string reason;
  bool float64 = false, int16 = false, int8 = false, storage16 = false, storage8 = false,
       atomics64 = false, shared_atomics64 = false;
  /// Whether shaders keep signed zeros, infinities and NaNs of f32 and f64 under the
  /// SignedZeroInfNanPreserve execution mode (VkPhysicalDeviceFloatControlsProperties).
  bool keeps_specials32 = false, keeps_specials64 = false;
  /// VK_KHR_shader_float_controls must be enabled (a Vulkan 1.1 device that has it).
  bool float_controls_ext = false;
  /// VK_EXT_external_memory_host: buffers over host memory, at this alignment (0: none).
  uint64_t host_import_alignment = 0;
};

Candidate inspect(const Instance &inst, VkPhysicalDevice pd) {
  Candidate c;
  c.device = pd;
  inst.vkGetPhysicalDeviceProperties(pd, &c.props);
  if (c.props.apiVersion < VK_API_VERSION_1_1) {
    c.reason = "supports Vulkan " + version_text(c.props.apiVersion) + "; hologram needs 1.1";
    return c;
  }
  uint32_t n = 0;
  inst.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  inst.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, families.data());
  bool found = false;
  for (uint32_t i = 0; i < n && !found; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      c.queue_family = i;
      found = true;
    }
  if (!found) {
    c.reason = "has no compute queue";
    return c;
  }
  VkPhysicalDeviceVulkan12Features f12{};
  f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  VkPhysicalDevice16BitStorageFeatures s16{};
  s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  VkPhysicalDeviceFeatures2 f{};
  f.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  f.pNext = &s16;
  bool v12 = c.props.apiVersion >= VK_API_VERSION_1_2 && inst.api_version >= VK_API_VERSION_1_2;
  if (v12) s16.pNext = &f12;
  inst.vkGetPhysicalDeviceFeatures2(pd, &f);
  if (!f.features.shaderInt64) {
    c.reason = "lacks shaderInt64, which every hologram kernel needs (64-bit lane ids)";
    return c;
  }
  c.float64 = f.features.shaderFloat64;
  c.int16 = f.features.shaderInt16;
  uint32_t num_ext = 0;
  inst.vkEnumerateDeviceExtensionProperties(pd, nullptr, &num_ext, nullptr);
  std::vector<VkExtensionProperties> exts(num_ext);
  inst.vkEnumerateDeviceExtensionProperties(pd, nullptr, &num_ext, exts.data());
  // Properties of an extension structure (`chain`, its sType set).
  auto properties = [&](void *chain) {
    VkPhysicalDeviceProperties2 p2{};
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p2.pNext = chain;
    inst.vkGetPhysicalDeviceProperties2(pd, &p2);
  };
  bool float_controls = v12;
  for (const auto &e : exts)
    if (!v12 && std::string_view(e.extensionName) == VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME)
      float_controls = c.float_controls_ext = true;
  if (float_controls) {
    VkPhysicalDeviceFloatControlsProperties fc{};
    fc.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES;
    properties(&fc);
    c.keeps_specials32 = fc.shaderSignedZeroInfNanPreserveFloat32;
    c.keeps_specials64 = fc.shaderSignedZeroInfNanPreserveFloat64;
  }
  for (const auto &e : exts)
    if (std::string_view(e.extensionName) == VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME) {
      VkPhysicalDeviceExternalMemoryHostPropertiesEXT host{};
      host.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT;
      properties(&host);
      c.host_import_alignment = std::max<uint64_t>(1, host.minImportedHostPointerAlignment);
    }
  c.storage16 = s16.storageBuffer16BitAccess;
  if (v12) {
    c.int8 = f12.shaderInt8;
    c.storage8 = f12.storageBuffer8BitAccess;
    c.atomics64 = f12.shaderBufferInt64Atomics;
    c.shared_atomics64 = f12.shaderSharedInt64Atomics;
  }
  return c;
}

bool is_gpu(const VkPhysicalDeviceProperties &p) {
  return p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
         p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
         p.deviceType == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU;
}

std::vector<Candidate> candidates(const Instance &inst) {
  uint32_t n = 0;
  inst.vkEnumeratePhysicalDevices(inst.handle, &n, nullptr);
  std::vector<VkPhysicalDevice> pds(n);
  inst.vkEnumeratePhysicalDevices(inst.handle, &n, pds.data());
  std::vector<Candidate> out;
  for (auto pd : pds) out.push_back(inspect(inst, pd));
  // Discrete GPUs first, then integrated and virtual ones, then everything else.
  auto rank = [](const Candidate &c) {
    const VkPhysicalDeviceType type = c.props.deviceType;
    if (type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) return 0;
    if (type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU) return 1;
    if (type == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU) return 2;
    return 3;
  };
  // Ordered by rank, then by the loader's order (std::stable_sort warns under clang with
  // libstdc++ 12, so the index breaks ties).
  std::vector<size_t> order(out.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(rank(out[a]), a) < std::pair(rank(out[b]), b);
  });
  std::vector<Candidate> sorted;
  for (size_t i : order) sorted.push_back(out[i]);
  return sorted;
}

// ---------------------------------------------------------------------------------------------
// The device

struct Device {
  std::shared_ptr<Instance> instance;
  Candidate cand;
  VkDevice handle = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  /// What one thread records and submits with: a command pool of its own (pools are not
  /// thread-safe), its command buffer, and the fence it waits on.
  struct Recorder {
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
  };
  IdleList<Recorder> recorders; ///< made on demand, one per thread submitting at once
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory{};
  codegen::SpirvTarget target;
  /// VK_EXT_external_memory_host's function, where the device has it.
  PFN_vkGetMemoryHostPointerPropertiesEXT vkGetMemoryHostPointerPropertiesEXT = nullptr;
  std::mutex queue_mutex; ///< the VkQueue (vkQueueSubmit, vkDeviceWaitIdle)
  /// Whether GLSL.std.450's Fma rounds once here, for f32 and for f64 (VkBool32 each, the
  /// values of SpirvKernelInfo::fma_spec_ids): found once, at the first launch of a kernel
  /// with an exact fma (VulkanBackend::probe_fma).
  std::once_flag fma_probed;
  std::array<uint32_t, 2> fma_rounds_once{};
  HG_VK_DEVICE_FUNCTIONS(HG_VK_DECLARE)

  Device(std::shared_ptr<Instance> inst, const Candidate &c) : instance(std::move(inst)), cand(c) {
    float priority = 1.0f;
    VkDeviceQueueCreateInfo q{};
    q.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    q.queueFamilyIndex = c.queue_family;
    q.queueCount = 1;
    q.pQueuePriorities = &priority;
    VkPhysicalDeviceVulkan12Features f12{};
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    f12.shaderInt8 = c.int8;
    f12.storageBuffer8BitAccess = c.storage8;
    f12.shaderBufferInt64Atomics = c.atomics64;
    f12.shaderSharedInt64Atomics = c.shared_atomics64;
    VkPhysicalDevice16BitStorageFeatures s16{};
    s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    s16.storageBuffer16BitAccess = c.storage16;
    VkPhysicalDeviceFeatures2 f{};
    f.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f.features.shaderInt64 = VK_TRUE;
    f.features.shaderFloat64 = c.float64;
    f.features.shaderInt16 = c.int16;
    f.pNext = &s16;
    bool v12 =
        c.props.apiVersion >= VK_API_VERSION_1_2 && instance->api_version >= VK_API_VERSION_1_2;
    if (v12) s16.pNext = &f12;
    VkDeviceCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    ci.pNext = &f;

    ci.queueCreateInfoCount = 1;
    ci.pQueueCreateInfos = &q;
    std::vector<const char *> extensions;
    if (c.host_import_alignment) extensions.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    if (c.float_controls_ext) extensions.push_back(VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME);
    ci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    ci.ppEnabledExtensionNames = extensions.data();
    check(instance->vkCreateDevice(c.device, &ci, nullptr, &handle), "vkCreateDevice");
    if (c.host_import_alignment)
      vkGetMemoryHostPointerPropertiesEXT =
          reinterpret_cast<PFN_vkGetMemoryHostPointerPropertiesEXT>(
              instance->vkGetDeviceProcAddr(handle, "vkGetMemoryHostPointerPropertiesEXT"));
#define HG_VK_LOAD_DEVICE(name)                                                                    \
  name = reinterpret_cast<PFN_##name>(instance->vkGetDeviceProcAddr(handle, #name));
    HG_VK_DEVICE_FUNCTIONS(HG_VK_LOAD_DEVICE)
#undef HG_VK_LOAD_DEVICE
    vkGetDeviceQueue(handle, c.queue_family, 0, &queue);
    instance->vkGetPhysicalDeviceMemoryProperties(c.device, &memory);
    VkPipelineCacheCreateInfo cci{};
    cci.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
    check(vkCreatePipelineCache(handle, &cci, nullptr, &pipeline_cache), "vkCreatePipelineCache");
    uint32_t api = std::min(c.props.apiVersion, instance->api_version);
    target = *codegen::parse_spirv_target(api >= VK_API_VERSION_1_3   ? "vulkan1.3"
                                          : api >= VK_API_VERSION_1_2 ? "vulkan1.2"
                                                                      : "vulkan1.1");
  }
  ~Device() {
    if (!handle) return;
    vkDeviceWaitIdle(handle);
    vkDestroyPipelineCache(handle, pipeline_cache, nullptr);
    for (const Recorder &r : recorders.idle()) {
      vkDestroyFence(handle, r.fence, nullptr);
      vkDestroyCommandPool(handle, r.pool, nullptr); // frees its command buffer
    }
    vkDestroyDevice(handle, nullptr);
  }
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  bool has_feature(const std::string &f) const {
    if (f == "float64") return cand.float64;
    if (f == "int16") return cand.int16;
    if (f == "int8") return cand.int8;
    if (f == "storage_buffer_16bit") return cand.storage16;
    if (f == "storage_buffer_8bit") return cand.storage8;
    if (f == "int64_atomics") return cand.atomics64;
    if (f == "shared_int64_atomics") return cand.shared_atomics64;
    if (f == "signed_zero_inf_nan_32") return cand.keeps_specials32;
    if (f == "signed_zero_inf_nan_64") return cand.keeps_specials64;
    return false;
  }

  /// A memory type with all of `want` among those `bits` allows; -1 if none.
  int memory_type(uint32_t bits, VkMemoryPropertyFlags want) const {
    for (uint32_t i = 0; i < memory.memoryTypeCount; ++i)
      if ((bits & (1u << i)) && (memory.memoryTypes[i].propertyFlags & want) == want)
        return static_cast<int>(i);
    return -1;
  }

  /// Records commands with `record` into a command buffer of the calling thread's own,
  /// submits them and waits for them. The queue is held only for the submission, so threads
  /// (the application's, or Queues') record, submit and wait at the same time, and the device
  /// may run one thread's copy while it runs another's kernel.
  template <typename F> void submit_and_wait(F &&record) {
    IdleList<Recorder>::Lease lease(recorders, [&] { return make_recorder(); });
    const Recorder &r = *lease;
    check(vkResetCommandBuffer(r.cmd, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(r.cmd, &bi), "vkBeginCommandBuffer");
    record(r.cmd);
    check(vkEndCommandBuffer(r.cmd), "vkEndCommandBuffer");
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &r.cmd;
    check(vkResetFences(handle, 1, &r.fence), "vkResetFences");
    {
      std::lock_guard lock(queue_mutex);
      check(vkQueueSubmit(queue, 1, &si, r.fence), "vkQueueSubmit");
    }
    check(vkWaitForFences(handle, 1, &r.fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  }

private:
  Recorder make_recorder() {
    Recorder r;
    VkCommandPoolCreateInfo pci{};
    pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = cand.queue_family;
    check(vkCreateCommandPool(handle, &pci, nullptr, &r.pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = r.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkFenceCreateInfo fi{};
    fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    VkResult e = vkAllocateCommandBuffers(handle, &ai, &r.cmd);
    if (e == VK_SUCCESS) e = vkCreateFence(handle, &fi, nullptr, &r.fence);
    if (e != VK_SUCCESS) {
      vkDestroyCommandPool(handle, r.pool, nullptr);
      check(e, "making a command buffer and fence");
    }
    return r;
  }
};

/// A buffer or pool: a storage buffer, mapped when its memory is host-visible (otherwise
/// copies go through a staging buffer); or the bytes [base, base + size) of another one's
/// storage buffer (`parent` set), or a storage buffer over host memory the application owns.
struct Memory {
  std::shared_ptr<Device> dev;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  std::byte *mapped = nullptr; ///< this memory's first byte, where the host can reach it
  uint64_t size = 0;
  uint64_t base = 0;              ///< where it starts in `buffer`
  std::shared_ptr<Memory> parent; ///< the owner of `buffer`, for a view

  /// The bytes [offset, offset + bytes) of `of`.
  Memory(const std::shared_ptr<Memory> &of, uint64_t offset, uint64_t bytes)
      : dev(of->dev), buffer(of->buffer), mapped(of->mapped ? of->mapped + offset : nullptr),
        size(bytes), base(of->base + offset), parent(of->parent ? of->parent : of) {}

  explicit Memory(std::shared_ptr<Device> d) : dev(std::move(d)) {}

  /// A storage buffer over host memory (VK_EXT_external_memory_host), or null where the
  /// driver does not import this memory.
  static std::shared_ptr<Memory> import(std::shared_ptr<Device> d, std::span<std::byte> host) {
    auto m = std::shared_ptr<Memory>(new Memory(std::move(d)));
    Device &dv = *m->dev;
    VkExternalMemoryBufferCreateInfo ext{};
    ext.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
    ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    VkBufferCreateInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bi.pNext = &ext;
    bi.size = host.size();
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (dv.vkCreateBuffer(dv.handle, &bi, nullptr, &m->buffer) != VK_SUCCESS) return nullptr;
    VkMemoryHostPointerPropertiesEXT props{};
    props.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT;
    if (dv.vkGetMemoryHostPointerPropertiesEXT(
            dv.handle, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, host.data(),
            &props) != VK_SUCCESS)
      return nullptr;
    VkMemoryRequirements req;
    dv.vkGetBufferMemoryRequirements(dv.handle, m->buffer, &req);
    int type =
        dv.memory_type(req.memoryTypeBits & props.memoryTypeBits,
                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    if (type < 0 || req.size > host.size()) return nullptr;
    VkImportMemoryHostPointerInfoEXT import{};
    import.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT;
    import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
    import.pHostPointer = host.data();
    VkMemoryAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    ai.pNext = &import;
    ai.allocationSize = host.size();
    ai.memoryTypeIndex = static_cast<uint32_t>(type);
    if (dv.vkAllocateMemory(dv.handle, &ai, nullptr, &m->memory) != VK_SUCCESS) return nullptr;
    if (dv.vkBindBufferMemory(dv.handle, m->buffer, m->memory, 0) != VK_SUCCESS) return nullptr;
    m->mapped = host.data();
    m->size = host.size();
    return m;
  }

  Memory(std::shared_ptr<Device> d, uint64_t bytes, bool host_only, const char *what)
      : dev(std::move(d)), size(bytes) {
    VkBufferCreateInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bi.size = std::max<uint64_t>(bytes, 4);
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    std::string what_s = std::string(what) + " of " + std::to_string(bytes) + " bytes";
    check(dev->vkCreateBuffer(dev->handle, &bi, nullptr, &buffer), "creating a " + what_s);
    VkMemoryRequirements req;
    dev->vkGetBufferMemoryRequirements(dev->handle, buffer, &req);
    const VkMemoryPropertyFlags host =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int type = host_only ? -1
                         : dev->memory_type(req.memoryTypeBits,
                                            VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host);
    if (type < 0 && !host_only)
      type = dev->memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type < 0) type = dev->memory_type(req.memoryTypeBits, host);
    if (type < 0) {
      dev->vkDestroyBuffer(dev->handle, buffer, nullptr);
      throw Error(ErrorCode::OutOfMemory, "vulkan: no memory type can hold a " + what_s);
    }
    VkMemoryAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = static_cast<uint32_t>(type);
    VkResult r = dev->vkAllocateMemory(dev->handle, &ai, nullptr, &memory);
    if (r != VK_SUCCESS) {
      dev->vkDestroyBuffer(dev->handle, buffer, nullptr);
      throw Error(ErrorCode::OutOfMemory,
                  "vulkan: cannot allocate a " + what_s + ": " + vk_result_name(r));
    }
    check(dev->vkBindBufferMemory(dev->handle, buffer, memory, 0), "vkBindBufferMemory");
    if (dev->memory.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
      void *p = nullptr;
      check(dev->vkMapMemory(dev->handle, memory, 0, VK_WHOLE_SIZE, 0, &p), "vkMapMemory");
      mapped = static_cast<std::byte *>(p);
      std::memset(mapped, 0, bi.size);
    } else {
      dev->submit_and_wait(
          [&](VkCommandBuffer cb) { dev->vkCmdFillBuffer(cb, buffer, 0, VK_WHOLE_SIZE, 0); });
    }
  }
  ~Memory() {
    if (parent) return; // a view owns nothing
    dev->vkDestroyBuffer(dev->handle, buffer, nullptr);
    dev->vkFreeMemory(dev->handle, memory, nullptr); // unmaps it
  }
  Memory(const Memory &) = delete;
  Memory &operator=(const Memory &) = delete;

  void write(uint64_t offset, std::span<const std::byte> data) {
    if (data.empty()) return;
    if (mapped) {
      std::memcpy(mapped + offset, data.data(), data.size());
      return;
    }
    Memory staging(dev, data.size(), true, "staging buffer");
    std::memcpy(staging.mapped, data.data(), data.size());
    dev->submit_and_wait([&](VkCommandBuffer cb) {
      VkBufferCopy region{0, base + offset, data.size()};
      dev->vkCmdCopyBuffer(cb, staging.buffer, buffer, 1, &region);
    });
  }
  void read(uint64_t offset, std::span<std::byte> out) {
    if (out.empty()) return;
    if (mapped) {
      std::memcpy(out.data(), mapped + offset, out.size());
      return;
    }
    Memory staging(dev, out.size(), true, "staging buffer");
    dev->submit_and_wait([&](VkCommandBuffer cb) {
      VkBufferCopy region{base + offset, 0, out.size()};
      dev->vkCmdCopyBuffer(cb, buffer, staging.buffer, 1, &region);
    });
    std::memcpy(out.data(), staging.mapped, out.size());
  }
};

// ---------------------------------------------------------------------------------------------
// Programs: a compiled kernel, its layouts and its pipelines by launch shape

struct Program {
  std::shared_ptr<Device> dev;
  isa::Kernel kernel;
  std::string source; ///< the file of the kernel's lines, for failed launches ("": not known)
  codegen::SpirvKernelInfo info;
  VkShaderModule shader = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  /// By block x/y/z, shared words, whether the launch has fewer than 2^32 lanes, whether its
  /// grid is one row of blocks, and whether the device's Fma rounds once (f32, f64).
  using SpecValues = std::array<uint32_t, 8>; ///< in the order of the specialisation ids
  std::map<SpecValues, VkPipeline> pipelines;
  std::mutex mutex;

  ~Program() {
    for (auto &[k, p] : pipelines) dev->vkDestroyPipeline(dev->handle, p, nullptr);
    if (layout) dev->vkDestroyPipelineLayout(dev->handle, layout, nullptr);
    if (set_layout) dev->vkDestroyDescriptorSetLayout(dev->handle, set_layout, nullptr);
    if (shader) dev->vkDestroyShaderModule(dev->handle, shader, nullptr);
  }

  VkPipeline pipeline(const LaunchConfig &launch, uint32_t shared_words) {
    std::lock_guard lock(mutex);
    // A VkBool32 of 1 for narrow: the lanes of the launch, a 96-bit product, below 2^32.
    __extension__ typedef unsigned __int128 Wide;
    Wide lanes = Wide{launch.grid.x} * launch.grid.y * launch.grid.z * launch.block.count();
    uint32_t narrow = lanes < (Wide{1} << 32) ? 1 : 0;
    uint32_t flat = launch.grid.y == 1 && launch.grid.z == 1 ? 1 : 0;
    // The fma constants only where the kernel has them, so that its pipelines do not
    // depend on whether another kernel has probed the device yet.
    const uint32_t fma32 = info.exact_fma ? dev->fma_rounds_once[0] : 0,
                   fma64 = info.exact_fma ? dev->fma_rounds_once[1] : 0;
    SpecValues key{launch.block.x, launch.block.y, launch.block.z, shared_words,
                   narrow,         flat,           fma32,          fma64};
    auto it = pipelines.find(key);
    if (it != pipelines.end()) return it->second;
    const SpecValues ids = {info.local_size_spec_ids[0], info.local_size_spec_ids[1],
                            info.local_size_spec_ids[2], info.shared_words_spec_id,
                            info.narrow_lanes_spec_id,   info.flat_grid_spec_id,
                            info.fma_spec_ids[0],        info.fma_spec_ids[1]};
    std::array<VkSpecializationMapEntry, std::tuple_size_v<SpecValues>> entries{};
    for (uint32_t i = 0; i < entries.size(); ++i) entries[i] = {ids[i], i * 4, 4};
    VkSpecializationInfo spec{};
    spec.mapEntryCount = static_cast<uint32_t>(entries.size());
    spec.pMapEntries = entries.data();
    spec.dataSize = sizeof(key);
    spec.pData = key.data();
    VkComputePipelineCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = shader;
    ci.stage.pName = info.name.c_str();
    ci.stage.pSpecializationInfo = &spec;
    ci.layout = layout;
    VkPipeline p = VK_NULL_HANDLE;
    check(dev->vkCreateComputePipelines(dev->handle, dev->pipeline_cache, 1, &ci, nullptr, &p),
          "creating the pipeline of kernel '" + kernel.name + "'");
    pipelines.emplace(key, p);
    return p;
  }
};

/// The Atlas state lives on the host: no kernel this back end compiles touches it yet.
class VulkanBackend final : public SpirvBackend<Program, Memory> {
public:
  explicit VulkanBackend(std::shared_ptr<Device> dev) : dev_(std::move(dev)) {}

  DeviceInfo device_info() const override {
    DeviceInfo d;
    d.backend = "vulkan";
    d.name = dev_->cand.props.deviceName;
    d.kind = is_gpu(dev_->cand.props)                                     ? DeviceKind::Gpu
             : dev_->cand.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? DeviceKind::Cpu
                                                                          : DeviceKind::Other;
    for (uint32_t i = 0; i < dev_->memory.memoryHeapCount; ++i)
      if (dev_->memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
        d.memory_bytes += dev_->memory.memoryHeaps[i].size;
    d.details = "Vulkan " + version_text(dev_->cand.props.apiVersion) + ", SPIR-V target " +
                dev_->target.name;
    d.view_alignment = view_alignment();
    return d;
  }

  void synchronize() override {
    std::lock_guard lock(dev_->queue_mutex);
    check(dev_->vkDeviceWaitIdle(dev_->handle), "vkDeviceWaitIdle");
  }

private:
  std::shared_ptr<Memory> allocate(uint64_t bytes, const char *what) override {
    if (bytes == 0)
      throw Error(ErrorCode::InvalidArgument,
                  std::string("cannot allocate a ") + what + " of 0 bytes");
    uint64_t limit = dev_->cand.props.limits.maxStorageBufferRange;
    if (bytes > limit)
      throw Error(ErrorCode::OutOfMemory,
                  std::string("cannot allocate a ") + what + " of " + std::to_string(bytes) +
                      " bytes: the largest storage buffer " + dev_->cand.props.deviceName +
                      " binds is " + std::to_string(limit) + " bytes");
    return std::make_shared<Memory>(dev_, bytes, false, what);
  }
  std::shared_ptr<Memory> view(const std::shared_ptr<Memory> &parent, uint64_t offset,
                               uint64_t bytes) override {
    return std::make_shared<Memory>(parent, offset, bytes);
  }
  std::shared_ptr<Memory> wrap(std::span<std::byte> memory, bool &shared) override {
    // In place where the driver imports host memory at this address and length; else a copy.
    uint64_t align = dev_->cand.host_import_alignment;
    if (align && reinterpret_cast<uintptr_t>(memory.data()) % align == 0 &&
        memory.size() % align == 0 &&
        memory.size() <= dev_->cand.props.limits.maxStorageBufferRange)
      if (auto m = Memory::import(dev_, memory)) {
        shared = true;
        return m;
      }
    shared = false;
    auto m = allocate(memory.size(), "buffer");
    m->write(0, memory);
    return m;
  }
  uint64_t view_alignment() const override {
    return std::max<uint64_t>(1, dev_->cand.props.limits.minStorageBufferOffsetAlignment);
  }
  void copy_on_device(Memory &from, uint64_t from_offset, Memory &to, uint64_t to_offset,
                      uint64_t bytes) override {
    dev_->submit_and_wait([&](VkCommandBuffer cb) {
      VkBufferCopy region{from.base + from_offset, to.base + to_offset, bytes};
      dev_->vkCmdCopyBuffer(cb, from.buffer, to.buffer, 1, &region);
    });
  }

  std::string backend_name() const override { return "vulkan"; }
  std::string_view payload_kind() const override { return artifact::kPayloadSpirvVulkan; }
  int payload_rank(const artifact::BundlePayload &p, std::string &why) const override {
    // vulkan1.N runs on devices of Vulkan 1.N or later; the newest such target is best.
    auto t = codegen::parse_spirv_target(p.name);
    if (!t || !t->is_vulkan()) {
      why = "not a Vulkan target";
      return -1;
    }
    int minor = p.name.back() - '0';
    if (minor > static_cast<int>(VK_API_VERSION_MINOR(dev_->cand.props.apiVersion))) {
      why = std::string(dev_->cand.props.deviceName) + " supports Vulkan " +
            version_text(dev_->cand.props.apiVersion);
      return -1;
    }
    return minor;
  }
  codegen::SpirvTarget compile_target() const override { return dev_->target; }
  bool has_feature(const std::string &f) const override { return dev_->has_feature(f); }
  std::string device_name() const override { return dev_->cand.props.deviceName; }

  /// Finds out once per device whether its Fma rounds once (Device::fma_rounds_once):
  /// HOLOGRAM_VULKAN_FMA=exact keeps the emulation and =device takes the device's Fma
  /// without asking; by default (=probe) the kernels of vulkan/fma_probe.hasm compute fma
  /// with the device's Fma where two roundings give another result than one (a product
  /// rounded before the sum, a sum rounded to f64 then f32, overflow of the product, results
  /// below the normal range) and must match C's fma bit for bit. A probe that cannot run
  /// (no f64 on the device) keeps the emulation.
  void probe_fma() {
    std::call_once(dev_->fma_probed, [&] {
      const char *env = std::getenv("HOLOGRAM_VULKAN_FMA");
      const std::string mode = env && *env ? env : "probe";
      if (mode == "exact" || mode == "device") {
        uint32_t v = mode == "device" ? 1 : 0;
        dev_->fma_rounds_once = {v, v};
        return;
      }
      if (mode != "probe")
        throw Error(ErrorCode::InvalidArgument,
                    "HOLOGRAM_VULKAN_FMA=" + mode + ": expected probe, exact or device");
      dev_->fma_rounds_once = run_fma_probe();
    });
  }

  std::array<uint32_t, 2> run_fma_probe() {
    static constexpr unsigned char kBundle[] = {
#include "fma_probe_bundle.inc"
    };
    auto bundle = artifact::read_bundle(
        std::string(reinterpret_cast<const char *>(kBundle), sizeof(kBundle)));
    if (!bundle) throw Error(ErrorCode::Internal, "the fma probe: " + bundle.message());
    ModuleHandle m = load_bundle("the fma probe", std::move(*bundle));
    auto rounds_once = [&]<typename T>(const char *kernel, const std::vector<T> &a,
                                       const std::vector<T> &b, const std::vector<T> &c) {
      const uint64_t bytes = a.size() * sizeof(T);
      std::vector<BufferHandle> bufs;
      for (int i = 0; i < 4; ++i) bufs.push_back(allocate_buffer(bytes));
      bool once = false;
      try {
        copy_to_buffer(bufs[0], 0, std::as_bytes(std::span(a)));
        copy_to_buffer(bufs[1], 0, std::as_bytes(std::span(b)));
        copy_to_buffer(bufs[2], 0, std::as_bytes(std::span(c)));
        std::vector<KernelArg> args;
        for (BufferHandle h : bufs) args.push_back(KernelArg::buffer(h));
        const auto n = static_cast<uint32_t>(a.size());
        launch(m, kernel, LaunchConfig::linear(n, n), args);
        std::vector<T> y(a.size());
        copy_from_buffer(bufs[3], 0, std::as_writable_bytes(std::span(y)));
        once = true;
        for (size_t i = 0; i < a.size(); ++i) {
          const T want = std::fma(a[i], b[i], c[i]);
          once = once && std::memcmp(&want, &y[i], sizeof(T)) == 0;
        }
      } catch (const Error &) { // the device cannot run it (f64): keep the emulation
        once = false;
      }
      for (BufferHandle h : bufs) free_buffer(h);
      return once ? 1u : 0u;
    };
    // f32: (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24 (the rounded product cancels to 0); a sum
    // within 2^-70 of a midpoint between two floats, below it and past it in magnitude
    // (rounded to f64 first it is the midpoint); the same below the normal range; MAX * 2
    // - MAX = MAX (a rounded product overflows).
    const float x = 1.0f + 0x1p-12f, up = (1.0f + 0x1p-23f) * 0x1p-12f,
                down = (1.0f - 0x1p-23f) * 0x1p-12f, odd = 1.0f + 0x1p-23f,
                tiny_up = (1.0f + 0x1p-23f) * 0x1p-75f, tiny_down = (1.0f - 0x1p-23f) * 0x1p-75f,
                fmax = std::numeric_limits<float>::max();
    const uint32_t f32 = rounds_once.template operator()<float>(
        "fma_probe_f32", {x, up, up, tiny_up, fmax}, {x, down, down, tiny_down, 2.0f},
        {-(1.0f + 0x1p-11f), odd, -odd, 0x1.000004p-127f, -fmax});
    // f64: a tie between two doubles that a far smaller c breaks either way; MAX * 2 - MAX;
    // (1 + 2^-52)^2 - (1 + 2^-51) = 2^-104; 0.1 * 0.1 minus its rounding (the product's error).
    const double e = 1.0 + 0x1p-52, dmax = std::numeric_limits<double>::max();
    const uint32_t f64 = rounds_once.template operator()<double>(
        "fma_probe_f64", {e, e, dmax, e, 0.1}, {1.5, 1.5, 2.0, e, 0.1},
        {-0x1p-200, 0x1p-200, -dmax, -(1.0 + 0x1p-51), -(0.1 * 0.1)});
    unload_module(m);
    return {f32, f64};
  }

  std::shared_ptr<Program> make_program(const isa::Kernel &kernel,
                                        const codegen::SpirvKernelInfo &info,
                                        const std::vector<uint32_t> &words) override {
    auto p = std::make_shared<Program>();
    p->dev = dev_;
    p->kernel = kernel;
    p->info = info;
    if (p->info.push_constant_bytes > dev_->cand.props.limits.maxPushConstantsSize)
      throw Error(
          ErrorCode::InvalidProgram,
          "kernel '" + kernel.name + "' passes " + std::to_string(p->info.push_constant_bytes) +
              " bytes of scalars and geometry; " + dev_->cand.props.deviceName + " takes at most " +
              std::to_string(dev_->cand.props.limits.maxPushConstantsSize));
    VkShaderModuleCreateInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    si.codeSize = words.size() * 4;
    si.pCode = words.data();
    check(dev_->vkCreateShaderModule(dev_->handle, &si, nullptr, &p->shader),
          "vkCreateShaderModule for kernel '" + kernel.name + "'");
    std::vector<VkDescriptorSetLayoutBinding> bindings;
    for (const auto &b : p->info.bindings) {
      VkDescriptorSetLayoutBinding lb{};
      lb.binding = b.binding;
      lb.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      lb.descriptorCount = 1;
      lb.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
      bindings.push_back(lb);
    }
    VkDescriptorSetLayoutCreateInfo li{};
    li.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    li.bindingCount = static_cast<uint32_t>(bindings.size());
    li.pBindings = bindings.data();
    check(dev_->vkCreateDescriptorSetLayout(dev_->handle, &li, nullptr, &p->set_layout),
          "vkCreateDescriptorSetLayout");
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, p->info.push_constant_bytes};
    VkPipelineLayoutCreateInfo pli{};
    pli.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &p->set_layout;
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &range;
    check(dev_->vkCreatePipelineLayout(dev_->handle, &pli, nullptr, &p->layout),
          "vkCreatePipelineLayout");
    return p;
  }

  void run(Program &p, const LaunchConfig &launch, std::span<const KernelArg> args) override {
    const auto &limits = dev_->cand.props.limits;
    const isa::Kernel &k = p.kernel;
    if (launch.block.x > limits.maxComputeWorkGroupSize[0] ||
        launch.block.y > limits.maxComputeWorkGroupSize[1] ||
        launch.block.z > limits.maxComputeWorkGroupSize[2] ||
        launch.block.count() > limits.maxComputeWorkGroupInvocations)
      throw Error(ErrorCode::InvalidArgument,
                  "kernel '" + k.name + "': a block of " + std::to_string(launch.block.x) + "x" +
                      std::to_string(launch.block.y) + "x" + std::to_string(launch.block.z) +
                      " lanes is larger than " + dev_->cand.props.deviceName + " runs (" +
                      std::to_string(limits.maxComputeWorkGroupInvocations) + " lanes, " +
                      std::to_string(limits.maxComputeWorkGroupSize[0]) + "x" +
                      std::to_string(limits.maxComputeWorkGroupSize[1]) + "x" +
                      std::to_string(limits.maxComputeWorkGroupSize[2]) + ")");
    uint64_t shared_bytes = uint64_t{p.info.static_shared_bytes} + launch.shared_memory;
    if (shared_bytes > limits.maxComputeSharedMemorySize)
      throw Error(ErrorCode::InvalidArgument,
                  "kernel '" + k.name + "' needs " + std::to_string(shared_bytes) +
                      " bytes of shared memory; " + dev_->cand.props.deviceName + " has " +
                      std::to_string(limits.maxComputeSharedMemorySize));
    auto shared_words = static_cast<uint32_t>(std::max<uint64_t>(1, (shared_bytes + 3) / 4));
    if (p.info.exact_fma) probe_fma();
    VkPipeline pipeline = p.pipeline(launch, shared_words);

    // Resolve the arguments; `keep` holds them alive even if another thread frees a handle.
    std::vector<std::shared_ptr<Memory>> keep;
    std::shared_ptr<Memory> state, status;
    auto atlas = begin_atlas(p.info);
    std::vector<std::byte> push(p.info.push_constant_bytes);
    std::memcpy(push.data(), &launch.grid, 12);
    if (p.info.phase_offset) std::memcpy(push.data() + p.info.phase_offset, &atlas.phase, 4);
    for (const auto &b : p.info.bindings) {
      if (b.kind == codegen::SpirvBinding::Kind::Buffer)
        keep.push_back(buffer_arg(args[b.param]));
      else if (b.kind == codegen::SpirvBinding::Kind::Pool)
        keep.push_back(pools_.get(args[b.param].handle));
      else if (b.kind == codegen::SpirvBinding::Kind::Boundary)
        keep.push_back(boundary());
      else if (b.kind == codegen::SpirvBinding::Kind::Scratch)
        keep.push_back(scratch(p.info, launch));
      else if (b.kind == codegen::SpirvBinding::Kind::Atlas) {
        state = std::make_shared<Memory>(dev_, codegen::spirv_status::kAtlasWords * 8, true,
                                         "Atlas state");
        state->write(0, std::as_bytes(std::span(atlas.words)));
        keep.push_back(state);
      } else {
        status = idle_status_.take([&] {
          return std::make_shared<Memory>(dev_, codegen::spirv_status::kWords * 4, true,
                                          "status buffer");
        });
        keep.push_back(status);
      }
    }
    for (const auto &s : p.info.scalars) {
      uint64_t bits = args[s.param].bits;
      isa::Type t = k.params[s.param].type;
      // 8- and 16-bit scalars travel as 32 bits, sign- or zero-extended.
      if (t == isa::Type::I8) bits = static_cast<uint32_t>(static_cast<int8_t>(bits));
      if (t == isa::Type::I16) bits = static_cast<uint32_t>(static_cast<int16_t>(bits));
      std::memcpy(push.data() + s.offset, &bits, s.size);
    }

    // The descriptor pool and set are this launch's own: nothing here needs a lock.
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              std::max<uint32_t>(1, static_cast<uint32_t>(keep.size()))};
    VkDescriptorPoolCreateInfo dpi{};
    dpi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    dpi.maxSets = 1;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &size;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    check(dev_->vkCreateDescriptorPool(dev_->handle, &dpi, nullptr, &pool),
          "vkCreateDescriptorPool");
    struct PoolGuard {
      Device &d;
      VkDescriptorPool p;
      ~PoolGuard() { d.vkDestroyDescriptorPool(d.handle, p, nullptr); }
    } guard{*dev_, pool};
    VkDescriptorSetAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    ai.descriptorPool = pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &p.set_layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    check(dev_->vkAllocateDescriptorSets(dev_->handle, &ai, &set), "vkAllocateDescriptorSets");
    std::vector<VkDescriptorBufferInfo> infos(keep.size());
    std::vector<VkWriteDescriptorSet> writes(keep.size());
    for (size_t i = 0; i < keep.size(); ++i) {
      infos[i] = {keep[i]->buffer, keep[i]->base, VK_WHOLE_SIZE};
      if (keep[i]->size > 0) infos[i].range = keep[i]->size;
      writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
      writes[i].dstSet = set;
      writes[i].dstBinding = p.info.bindings[i].binding;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    }
    dev_->vkUpdateDescriptorSets(dev_->handle, static_cast<uint32_t>(writes.size()), writes.data(),
                                 0, nullptr);

    dev_->submit_and_wait([&](VkCommandBuffer cb) {
      dev_->vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
      dev_->vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0,
                                    nullptr);
      // Grids larger than the device dispatches at once run as several dispatches; each
      // passes its first block so the kernel sees one grid.
      const uint32_t *maxg = limits.maxComputeWorkGroupCount;
      for (uint32_t z = 0; z < launch.grid.z; z += maxg[2])
        for (uint32_t y = 0; y < launch.grid.y; y += maxg[1])
          for (uint32_t x = 0; x < launch.grid.x; x += maxg[0]) {
            uint32_t base[3] = {x, y, z};
            std::memcpy(push.data() + 12, base, 12);
            dev_->vkCmdPushConstants(cb, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                     static_cast<uint32_t>(push.size()), push.data());
            dev_->vkCmdDispatch(cb, std::min(maxg[0], launch.grid.x - x),
                                std::min(maxg[1], launch.grid.y - y),
                                std::min(maxg[2], launch.grid.z - z));
          }
    });
    if (status) {
      uint32_t w[codegen::spirv_status::kWords];
      std::memcpy(w, status->mapped, sizeof(w));
      report_status(p.kernel, p.source, launch, args, shared_bytes, w, "the Vulkan backend");
      idle_status_.give(std::move(status)); // still zero: nothing went wrong
    }
    if (state) state->read(0, std::as_writable_bytes(std::span(atlas.words)));
    end_atlas(atlas);
  }

  std::shared_ptr<Device> dev_;
};

} // namespace

std::vector<VulkanDeviceReport> vulkan_devices(std::string &error) {
  std::vector<VulkanDeviceReport> out;
  auto inst = Instance::shared(error);
  if (!inst) return out;
  for (const auto &c : candidates(*inst))
    out.push_back({c.props.deviceName, is_gpu(c.props), c.reason.empty(), c.reason});
  if (out.empty()) error = "the Vulkan loader finds no device";
  return out;
}

std::unique_ptr<Backend> make_vulkan_backend(bool allow_cpu_devices) {
  std::string error;
  auto inst = Instance::shared(error);
  if (!inst) throw Error(ErrorCode::BackendUnavailable, error);
  std::string rejected;
  for (const auto &c : candidates(*inst)) {
    std::string name = c.props.deviceName;
    if (!c.reason.empty()) {
      rejected += "; " + name + " " + c.reason;
      continue;
    }
    if (!is_gpu(c.props) && !allow_cpu_devices) {
      rejected += "; " + name + " is not a GPU (name the vulkan backend to use it)";
      continue;
    }
    try {
      return std::make_unique<VulkanBackend>(std::make_shared<Device>(inst, c));
    } catch (const Error &e) {
      rejected += "; " + name + ": " + e.what();
    }
  }
  throw Error(ErrorCode::BackendUnavailable,
              "no usable device" +
                  (rejected.empty() ? std::string(" (none found)") : ":" + rejected.substr(1)));
}

} // namespace hologram::runtime
