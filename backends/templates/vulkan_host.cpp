// ---------------------------------------------------------------------------
// (A template: `backends emit --target vulkan` writes it with the helpers of
// templates/host_util.inc in place of the @HOST_UTIL@ line.)
//
// The Vulkan host: runs the GLSL shaders of `backends emit --target glsl`,
// compiled to SPIR-V, on any Vulkan device, with a deadline and a stop flag.
//
// Build (what the emitted build.sh does):
//   g++ -std=c++17 -O2 vulkan_host.cpp -lvulkan -o vkrun    (Debian: libvulkan-dev)
//   for f in *.comp; do glslangValidator -V "$f" -o "${f%.comp}.spv"; done
//
// Each shader starts with a line `// axb-run: mapping=M instances=I
// workgroups=W words=N test=NAME`; the host reads it from the `.comp` and
// runs the `.spv` beside it. A run zeroes the test memory, dispatches W
// workgroups of one invocation and waits for the fence until the deadline.
// At the deadline it writes 1 to the stop flag, a word of host-visible,
// host-coherent memory that the shader reads (coherent volatile) once per
// loop iteration, so every invocation leaves its loop, the dispatch ends
// and the next run starts in the same process. Vulkan makes host writes
// available to the device only at submission, so where the flag lives
// matters: on an NVIDIA H200 (driver 580) a flag in host memory never
// reached a running dispatch (the canary ran on for 30 s after it), so the
// flag goes in device-local host-visible memory (a BAR mapping, written
// through to the GPU's own memory) where the device has such a type
// (--stop-memory auto, the default; `device` insists, `host` is the old
// placement: the first host-visible, host-coherent type; --info says which
// the flag got). A dispatch that does not end within --stop-grace-ms (30 s,
// plus 1 ms per workgroup) of the flag is an error, never a result.
//
// Same command line and result lines as the C++ and CUDA programs (see
// `backends/src/host.rs`), plus --shaders DIR, --device D and --info.
// ---------------------------------------------------------------------------

#include <vulkan/vulkan.h>

#include <atomic>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

static const char kUsage[] =
    "usage: vkrun --shaders DIR [options]\n"
    "Runs progress litmus tests (GLSL shaders of `backends emit --target glsl`, with a .spv\n"
    "beside each .comp) on a Vulkan device and prints one JSON line per run.\n"
    "  --shaders DIR        the directory of NAME.MAPPING.comp and .spv files\n"
    "  --test NAME[,NAME]   tests to run (default: all, by file name; see --list; `\\,` is a comma in a name)\n"
    "  --mapping LIST       plain, round-robin, chunked, all (default: every mapping with shaders)\n"
    "  --instances M        must equal the instances the shaders were emitted for\n"
    "  --iterations K       runs of each test and mapping (default: 1)\n"
    "  --deadline-ms D      stop a run after D ms, reported non-terminating (default: 20000)\n"
    "  --list               print the selected tests, name and thread count\n"
    "  --device D           Vulkan physical device index (default: 0)\n"
    "  --info               print the device as JSON and exit (with --shaders, after the canary)\n"
    "  --no-canary          run even if the device ends loops by itself (testing the host only)\n"
    "  --stop-memory WHERE  the stop flag's memory: auto (device-local host-visible if the device\n"
    "                       has it, else host), device, host (default: auto)\n"
    "  --stop-grace-ms MS   how long a stopped dispatch may take to end, plus 1 ms per workgroup\n"
    "                       (default: 30000)\n"
    "Before any run the host dispatches axb-canary.comp, one thread waiting for a write nobody\n"
    "makes: if the device ends it, the device leaves loops by itself (llvmpipe/lavapipe does,\n"
    "after 65535 iterations) and its runs cannot show non-termination, so the host refuses it.\n";

// @HOST_UTIL@


[[noreturn]] static void fail(const std::string& msg) {
    std::fprintf(stderr, "error: %s\n", msg.c_str());
    std::exit(1);
}

static const char* vk_result_name(VkResult r) {
    switch (r) {
        case VK_SUCCESS: return "VK_SUCCESS";
        case VK_TIMEOUT: return "VK_TIMEOUT";
        case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
        case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
        case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
        case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
        case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
        case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
        default: return "VkResult";
    }
}

#define VK_CHECK(call)                                                                               \
    do {                                                                                             \
        VkResult axb_r_ = (call);                                                                    \
        if (axb_r_ != VK_SUCCESS) {                                                                  \
            fail(std::string(#call) + " failed: " + vk_result_name(axb_r_) + " (" +                  \
                 std::to_string((int)axb_r_) + ")");                                                 \
        }                                                                                            \
    } while (0)

// One shader: the test under one mapping, from its `axb-run:` header.
struct Shader {
    std::string name;
    uint32_t mapping = 0;
    uint32_t instances = 0;
    uint64_t workgroups = 0;
    uint64_t words = 0;
    fs::path comp, spv;
    uint32_t threads() const { return (uint32_t)(workgroups / instances); }
};

static bool read_header(const fs::path& comp, Shader* s) {
    // The line follows `#version` at the top of the file.
    std::ifstream in(comp);
    std::string line;
    const std::string tag = "// axb-run: ";
    bool found = false;
    for (int k = 0; k < 3 && !found && std::getline(in, line); k++) found = line.rfind(tag, 0) == 0;
    if (!found) return false;
    std::string rest = line.substr(tag.size());
    const size_t name_at = rest.find("test=");
    if (name_at == std::string::npos) return false;
    s->name = rest.substr(name_at + 5);
    std::istringstream fields(rest.substr(0, name_at));
    std::string field;
    bool have_mapping = false;
    while (fields >> field) {
        const size_t eq = field.find('=');
        if (eq == std::string::npos) return false;
        const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
        if (key == "mapping") {
            for (uint32_t k = 0; k < 3; k++) {
                if (value == kMappingNames[k]) {
                    s->mapping = k;
                    have_mapping = true;
                }
            }
        } else if (key == "instances") {
            s->instances = (uint32_t)std::strtoul(value.c_str(), nullptr, 10);
        } else if (key == "workgroups") {
            s->workgroups = std::strtoull(value.c_str(), nullptr, 10);
        } else if (key == "words") {
            s->words = std::strtoull(value.c_str(), nullptr, 10);
        }
    }
    s->comp = comp;
    s->spv = comp;
    s->spv.replace_extension(".spv");
    return have_mapping && s->instances > 0 && s->workgroups > 0 && s->words > 0;
}

// Every shader in `dir`, by file name.
static std::vector<Shader> load_shaders(const std::string& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) axb_fail_usage("--shaders: `" + dir + "` is not a directory");
    std::vector<fs::path> comps;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        if (e.path().extension() == ".comp") comps.push_back(e.path());
    }
    if (ec) fail("cannot read " + dir + ": " + ec.message());
    std::sort(comps.begin(), comps.end());
    std::vector<Shader> out;
    for (const fs::path& p : comps) {
        Shader s;
        if (!read_header(p, &s)) {
            fail(p.string() + ": not a shader of `backends emit --target glsl` (no `// axb-run:` line at its top)");
        }
        if (!fs::is_regular_file(s.spv, ec)) {
            fail(s.spv.string() + ": missing: compile it with glslangValidator -V " + p.string() + " -o " +
                 s.spv.string());
        }
        out.push_back(s);
    }
    if (out.empty()) fail("no .comp shaders in " + dir + " (emit them with `backends emit --target glsl`)");
    return out;
}

static std::vector<uint32_t> read_spirv(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) fail("cannot read " + p.string());
    if (bytes.size() < 20 || bytes.size() % 4 != 0) fail(p.string() + ": not a SPIR-V module");
    std::vector<uint32_t> words(bytes.size() / 4);
    std::memcpy(words.data(), bytes.data(), bytes.size());
    if (words[0] != 0x07230203u) fail(p.string() + ": not a SPIR-V module (bad magic number)");
    return words;
}

static const char* device_type_name(VkPhysicalDeviceType t) {
    switch (t) {
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated-gpu";
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete-gpu";
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual-gpu";
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
        default: return "other";
    }
}

static std::string version_string(uint32_t v) {
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
           std::to_string(VK_API_VERSION_PATCH(v));
}

static uint32_t memory_type(VkPhysicalDevice pd, uint32_t allowed, VkMemoryPropertyFlags want) {
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    for (uint32_t k = 0; k < mp.memoryTypeCount; k++) {
        if ((allowed & (1u << k)) && (mp.memoryTypes[k].propertyFlags & want) == want) return k;
    }
    return UINT32_MAX;
}

struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    bool device_local = false;  // the memory type chosen is device-local
};

static Buffer make_buffer(VkPhysicalDevice pd, VkDevice dev, VkDeviceSize size, VkBufferUsageFlags usage,
                          VkMemoryPropertyFlags prefer, VkMemoryPropertyFlags need, const char* what) {
    Buffer b;
    VkBufferCreateInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bi.size = size;
    bi.usage = usage;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VK_CHECK(vkCreateBuffer(dev, &bi, nullptr, &b.buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, b.buffer, &req);
    uint32_t type = memory_type(pd, req.memoryTypeBits, prefer | need);
    if (type == UINT32_MAX) type = memory_type(pd, req.memoryTypeBits, need);
    if (type == UINT32_MAX) fail(std::string("the device has no suitable memory for the ") + what);
    VkMemoryAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    {
        VkPhysicalDeviceMemoryProperties mp;
        vkGetPhysicalDeviceMemoryProperties(pd, &mp);
        b.device_local = (mp.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0;
    }
    VK_CHECK(vkAllocateMemory(dev, &ai, nullptr, &b.memory));
    VK_CHECK(vkBindBufferMemory(dev, b.buffer, b.memory, 0));
    return b;
}

int main(int argc, char** argv) {
    std::string shader_dir, tests_arg;
    std::vector<uint32_t> mappings;
    long instances = -1, iterations = 1, deadline_ms = 20000, device_index = 0;
    long stop_grace_ms = 30000;
    std::string stop_memory = "auto";
    bool list = false, info = false, canary = true;
    for (int i = 1; i < argc; i++) {
        std::string v;
        if (axb_flag(argc, argv, &i, "--shaders", &v)) {
            shader_dir = v;
        } else if (axb_flag(argc, argv, &i, "--test", &v)) {
            tests_arg += (tests_arg.empty() ? "" : ",") + v;
        } else if (axb_flag(argc, argv, &i, "--mapping", &v)) {
            for (const std::string& m : axb_split(v)) {
                if (m == "all") {
                    for (uint32_t k = 0; k < 3; k++) mappings.push_back(k);
                    continue;
                }
                uint32_t k = 0;
                while (k < 3 && m != kMappingNames[k]) k++;
                if (k == 3) axb_fail_usage("unknown mapping `" + m + "`: expected plain, round-robin, chunked or all");
                mappings.push_back(k);
            }
        } else if (axb_flag(argc, argv, &i, "--instances", &v)) {
            instances = axb_parse_count("--instances", v, 1);
        } else if (axb_flag(argc, argv, &i, "--iterations", &v)) {
            iterations = axb_parse_count("--iterations", v, 1);
        } else if (axb_flag(argc, argv, &i, "--deadline-ms", &v)) {
            deadline_ms = axb_parse_count("--deadline-ms", v, 1);
        } else if (axb_flag(argc, argv, &i, "--device", &v)) {
            device_index = axb_parse_count("--device", v, 0);
        } else if (std::strcmp(argv[i], "--list") == 0) {
            list = true;
        } else if (std::strcmp(argv[i], "--info") == 0) {
            info = true;
        } else if (std::strcmp(argv[i], "--no-canary") == 0) {
            canary = false;
        } else if (axb_flag(argc, argv, &i, "--stop-grace-ms", &v)) {
            stop_grace_ms = axb_parse_count("--stop-grace-ms", v, 1);
        } else if (axb_flag(argc, argv, &i, "--stop-memory", &v)) {
            if (v != "auto" && v != "device" && v != "host") {
                axb_fail_usage("--stop-memory: `" + v + "` is not auto, device or host");
            }
            stop_memory = v;
        } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::fputs(kUsage, stdout);
            return 0;
        } else {
            axb_fail_usage(std::string("unknown argument `") + argv[i] + "`");
        }
    }
    if (!info && shader_dir.empty()) axb_fail_usage("--shaders DIR is required");
    const std::string kCanary = "axb-canary";

    // The runs asked for: (shader index) per test, in the order asked.
    std::vector<Shader> shaders;
    std::vector<std::string> names;  // tests in run order
    std::map<std::pair<std::string, uint32_t>, size_t> by_key;
    long canary_index = -1;
    if (!shader_dir.empty()) {
        shaders = load_shaders(shader_dir);
        for (size_t k = 0; k < shaders.size(); k++) {
            const Shader& s = shaders[k];
            if (s.name == kCanary) {
                canary_index = (long)k;
                continue;
            }
            if (!by_key.emplace(std::make_pair(s.name, s.mapping), k).second) {
                fail(s.comp.string() + ": a second shader of test `" + s.name + "` under " + kMappingNames[s.mapping]);
            }
            if (instances > 0 && s.mapping != 0 && (long)s.instances != instances) {
                axb_fail_usage(s.comp.string() + " was emitted for " + std::to_string(s.instances) +
                           " instances, not " + std::to_string(instances) +
                           ": emit the shaders again with --instances " + std::to_string(instances));
            }
            if (std::find(names.begin(), names.end(), s.name) == names.end()) names.push_back(s.name);
        }
        if (names.empty()) fail("no test shaders in " + shader_dir + " (only the canary)");
        if (!tests_arg.empty()) {
            std::vector<std::string> chosen;
            for (const std::string& n : axb_split_names(tests_arg)) {
                if (std::find(names.begin(), names.end(), n) == names.end()) {
                    axb_fail_usage("no test named `" + n + "` in " + shader_dir + " (see --list)");
                }
                chosen.push_back(n);
            }
            names = chosen;
        }
        if (mappings.empty()) {
            for (uint32_t k = 0; k < 3; k++) {
                for (const Shader& s : shaders) {
                    if (s.mapping == k) {
                        mappings.push_back(k);
                        break;
                    }
                }
            }
        }
        for (const std::string& n : names) {
            for (uint32_t m : mappings) {
                if (!by_key.count({n, m})) {
                    axb_fail_usage("no shader of test `" + n + "` under the " + kMappingNames[m] + " mapping in " +
                               shader_dir);
                }
            }
        }
        if (list && !info) {
            for (const std::string& n : names) {
                std::printf("%s\t%u\n", n.c_str(), (unsigned)shaders[by_key.at({n, mappings[0]})].threads());
            }
            return 0;
        }
    }

    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "axb-vulkan-host";
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ici{};
    ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ici.pApplicationInfo = &app;
    VkInstance instance;
    const VkResult created = vkCreateInstance(&ici, nullptr, &instance);
    if (created == VK_ERROR_INCOMPATIBLE_DRIVER || created == VK_ERROR_INITIALIZATION_FAILED) {
        fail("no Vulkan 1.1 driver found: install one (Debian: mesa-vulkan-drivers, whose lavapipe runs on the CPU)");
    }
    VK_CHECK(created);
    uint32_t count = 0;
    VK_CHECK(vkEnumeratePhysicalDevices(instance, &count, nullptr));
    if (count == 0) {
        fail("no Vulkan device found: install a driver (Debian: mesa-vulkan-drivers, whose lavapipe runs on the CPU)");
    }
    std::vector<VkPhysicalDevice> devices(count);
    VK_CHECK(vkEnumeratePhysicalDevices(instance, &count, devices.data()));
    if (device_index >= (long)count) {
        fail("no Vulkan device " + std::to_string(device_index) + ": there are " + std::to_string(count));
    }
    VkPhysicalDevice pd = devices[(size_t)device_index];
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);


    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &families, nullptr);
    std::vector<VkQueueFamilyProperties> fam(families);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &families, fam.data());
    uint32_t family = UINT32_MAX;
    for (uint32_t k = 0; k < families && family == UINT32_MAX; k++) {
        if (fam[k].queueFlags & VK_QUEUE_COMPUTE_BIT) family = k;
    }
    if (family == UINT32_MAX) fail(std::string(props.deviceName) + " has no compute queue");
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{};
    qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qci.queueFamilyIndex = family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    VkDeviceCreateInfo dci{};
    dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    VkDevice dev;
    VK_CHECK(vkCreateDevice(pd, &dci, nullptr, &dev));
    VkQueue queue;
    vkGetDeviceQueue(dev, family, 0, &queue);

    uint64_t max_words = 1;
    if (canary_index >= 0) max_words = std::max(max_words, shaders[(size_t)canary_index].words);
    for (const std::string& n : (info ? std::vector<std::string>{} : names)) {
        for (uint32_t m : mappings) {
            const Shader& s = shaders[by_key.at({n, m})];
            if (s.workgroups > props.limits.maxComputeWorkGroupCount[0]) {
                fail(s.comp.string() + ": " + std::to_string(s.workgroups) + " workgroups exceed the device's " +
                     std::to_string(props.limits.maxComputeWorkGroupCount[0]) + " in x: emit with fewer --instances");
            }
            max_words = std::max(max_words, s.words);
        }
    }
    Buffer mem = make_buffer(pd, dev, max_words * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, "test memory");
    // The stop flag: device-local if asked for or (auto) if there is such
    // a host-visible, host-coherent type; see the note at the top.
    const VkMemoryPropertyFlags host_rw = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    const VkMemoryPropertyFlags stop_need =
        stop_memory == "device" ? host_rw | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT : host_rw;
    const VkMemoryPropertyFlags stop_prefer = stop_memory == "auto" ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT : 0;
    Buffer stop_buf = make_buffer(pd, dev, 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, stop_prefer, stop_need,
                                  "stop flag (host-visible, host-coherent; --stop-memory)");
    const bool stop_on_device = stop_buf.device_local;
    void* mapped = nullptr;
    VK_CHECK(vkMapMemory(dev, stop_buf.memory, 0, VK_WHOLE_SIZE, 0, &mapped));
    volatile uint32_t* stop = (volatile uint32_t*)mapped;

    VkDescriptorSetLayoutBinding bindings[2]{};
    for (uint32_t k = 0; k < 2; k++) {
        bindings[k].binding = k;
        bindings[k].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        bindings[k].descriptorCount = 1;
        bindings[k].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo dsl{};
    dsl.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    dsl.bindingCount = 2;
    dsl.pBindings = bindings;
    VkDescriptorSetLayout set_layout;
    VK_CHECK(vkCreateDescriptorSetLayout(dev, &dsl, nullptr, &set_layout));
    VkPipelineLayoutCreateInfo plci{};
    plci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    plci.setLayoutCount = 1;
    plci.pSetLayouts = &set_layout;
    VkPipelineLayout pipeline_layout;
    VK_CHECK(vkCreatePipelineLayout(dev, &plci, nullptr, &pipeline_layout));
    VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2};
    VkDescriptorPoolCreateInfo dpci{};
    dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    dpci.maxSets = 1;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &pool_size;
    VkDescriptorPool pool;
    VK_CHECK(vkCreateDescriptorPool(dev, &dpci, nullptr, &pool));
    VkDescriptorSetAllocateInfo dsai{};
    dsai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    dsai.descriptorPool = pool;
    dsai.descriptorSetCount = 1;
    dsai.pSetLayouts = &set_layout;
    VkDescriptorSet set;
    VK_CHECK(vkAllocateDescriptorSets(dev, &dsai, &set));
    VkDescriptorBufferInfo infos[2] = {{mem.buffer, 0, VK_WHOLE_SIZE}, {stop_buf.buffer, 0, VK_WHOLE_SIZE}};
    VkWriteDescriptorSet writes[2]{};
    for (uint32_t k = 0; k < 2; k++) {
        writes[k].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        writes[k].dstSet = set;
        writes[k].dstBinding = k;
        writes[k].descriptorCount = 1;
        writes[k].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[k].pBufferInfo = &infos[k];
    }
    vkUpdateDescriptorSets(dev, 2, writes, 0, nullptr);

    VkCommandPoolCreateInfo cpci{};
    cpci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    cpci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpci.queueFamilyIndex = family;
    VkCommandPool cmd_pool;
    VK_CHECK(vkCreateCommandPool(dev, &cpci, nullptr, &cmd_pool));
    VkCommandBufferAllocateInfo cbai{};
    cbai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cbai.commandPool = cmd_pool;
    cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cbai.commandBufferCount = 1;
    VkCommandBuffer cmd;
    VK_CHECK(vkAllocateCommandBuffers(dev, &cbai, &cmd));
    VkFenceCreateInfo fci{};
    fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    VkFence fence;
    VK_CHECK(vkCreateFence(dev, &fci, nullptr, &fence));

    // One test and mapping: its pipeline, then `runs` runs, each reported
    // to `report(iteration, terminated, elapsed_ms)`.
    auto run_shader = [&](const Shader& s, long runs, long deadline, auto&& report) {
        const std::vector<uint32_t> code = read_spirv(s.spv);
        VkShaderModuleCreateInfo smci{};
        smci.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
        smci.codeSize = code.size() * 4;
        smci.pCode = code.data();
        VkShaderModule module;
        VK_CHECK(vkCreateShaderModule(dev, &smci, nullptr, &module));
        VkComputePipelineCreateInfo cci{};
        cci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
        cci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        cci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        cci.stage.module = module;
        cci.stage.pName = "main";
        cci.layout = pipeline_layout;
        VkPipeline pipeline;
        VK_CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cci, nullptr, &pipeline));

        VK_CHECK(vkResetCommandBuffer(cmd, 0));
        VkCommandBufferBeginInfo cbbi{};
        cbbi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
        VK_CHECK(vkBeginCommandBuffer(cmd, &cbbi));
        vkCmdFillBuffer(cmd, mem.buffer, 0, s.words * 4, 0u);
        VkMemoryBarrier barrier{};
        barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
        barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                             VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_layout, 0, 1, &set, 0, nullptr);
        vkCmdDispatch(cmd, (uint32_t)s.workgroups, 1, 1);
        VK_CHECK(vkEndCommandBuffer(cmd));

        for (long it = 0; it < runs; it++) {
            *stop = 0u;
            VK_CHECK(vkResetFences(dev, 1, &fence));
            VkSubmitInfo si{};
            si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
            si.commandBufferCount = 1;
            si.pCommandBuffers = &cmd;
            const auto t0 = std::chrono::steady_clock::now();
            VK_CHECK(vkQueueSubmit(queue, 1, &si, fence));
            const double left_ms = (double)deadline - axb_ms_since(t0);
            const uint64_t wait_ns = left_ms > 0 ? (uint64_t)(left_ms * 1e6) : 0;
            VkResult r = vkWaitForFences(dev, 1, &fence, VK_TRUE, wait_ns);
            const bool terminated = r == VK_SUCCESS;
            if (r == VK_TIMEOUT) {
                *stop = 1u;
                std::atomic_thread_fence(std::memory_order_seq_cst);  // out of any write-combining buffer
                // Every workgroup still to run must start and leave:
                // allow 1 ms each (CPU devices are that slow).
                const uint64_t grace_ms = (uint64_t)stop_grace_ms + s.workgroups;
                r = vkWaitForFences(dev, 1, &fence, VK_TRUE, grace_ms * 1000000ull);
                if (r == VK_TIMEOUT) {
                    fail("test " + s.name + ", " + kMappingNames[s.mapping] + ": the dispatch did not end within " +
                         std::to_string(grace_ms) + " ms of the stop flag");
                }
            }
            if (r != VK_SUCCESS) {
                fail("test " + s.name + ", " + kMappingNames[s.mapping] + ": waiting for the dispatch: " +
                     vk_result_name(r) + " (" + std::to_string((int)r) + ")");
            }
            report(it, terminated, axb_ms_since(t0));
        }
        vkDestroyPipeline(dev, pipeline, nullptr);
        vkDestroyShaderModule(dev, module, nullptr);
    };

    // The canary first: a device that ends it cannot show non-termination.
    double stop_latency_ms = -1;
    if (canary && canary_index >= 0) {
        const long canary_deadline_ms = 500;
        run_shader(shaders[(size_t)canary_index], 1, canary_deadline_ms, [&](long, bool terminated, double ms) {
            stop_latency_ms = ms - (double)canary_deadline_ms;
            if (terminated) {
                char took[32];
                std::snprintf(took, sizeof took, "%.1f", ms);
                fail(std::string(props.deviceName) + " ended the canary (" + shaders[(size_t)canary_index].comp.string() +
                     ", one thread waiting for a write nobody makes) after " + took +
                     " ms: the device leaves loops by itself (llvmpipe/lavapipe does after 65535 iterations), so "
                     "no run on it can show non-termination. Use another device (--device N; through `backends run`, "
                     "--program-arg=--device=N), or --no-canary (also a flag of `backends run`) to test the host "
                     "only");
            }
        });
    } else if (canary && !shader_dir.empty()) {
        std::fprintf(stderr,
                     "warning: no %s.comp in %s: not checking that the device never ends a loop by itself\n",
                     kCanary.c_str(), shader_dir.c_str());
    }

    if (info) {
        VkPhysicalDeviceSubgroupProperties subgroup{};
        subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
        VkPhysicalDeviceDriverProperties driver{};
        driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
        if (props.apiVersion >= VK_API_VERSION_1_2) subgroup.pNext = &driver;
        VkPhysicalDeviceProperties2 p2{};
        p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
        p2.pNext = &subgroup;
        vkGetPhysicalDeviceProperties2(pd, &p2);
        char latency[32] = "null";
        if (stop_latency_ms >= 0) std::snprintf(latency, sizeof latency, "%.3f", stop_latency_ms);
        std::printf("{\"device\":%s,\"index\":%ld,\"device_type\":\"%s\",\"vendor_id\":%u,\"device_id\":%u,"
                    "\"api_version\":\"%s\",\"driver_version\":%u,\"driver_name\":%s,\"driver_info\":%s,"
                    "\"subgroup_size\":%u,\"max_workgroups_x\":%u,\"stop_memory\":\"%s\",\"stop_latency_ms\":%s}\n",
                    axb_json_string(props.deviceName).c_str(), device_index, device_type_name(props.deviceType),
                    props.vendorID, props.deviceID, version_string(props.apiVersion).c_str(), props.driverVersion,
                    axb_json_string(driver.driverName).c_str(), axb_json_string(driver.driverInfo).c_str(),
                    subgroup.subgroupSize, props.limits.maxComputeWorkGroupCount[0], stop_on_device ? "device" : "host",
                    latency);
        return 0;
    }

    const std::string extra = ",\"device\":" + axb_json_string(props.deviceName);
    for (const std::string& n : names) {
        for (uint32_t m : mappings) {
            const Shader& s = shaders[by_key.at({n, m})];
            run_shader(s, iterations, deadline_ms, [&](long it, bool terminated, double elapsed) {
                std::printf("{\"test\":%s,\"target\":\"vulkan\",\"mapping\":\"%s\",\"instances\":%u,"
                            "\"workgroups\":%llu,\"iteration\":%ld,\"terminated\":%s,\"elapsed_ms\":%.3f%s}\n",
                            axb_json_string(n).c_str(), kMappingNames[m], (unsigned)s.instances,
                            (unsigned long long)s.workgroups, it, terminated ? "true" : "false", elapsed,
                            extra.c_str());
                std::fflush(stdout);
            });
        }
    }
    vkDestroyFence(dev, fence, nullptr);
    vkDestroyCommandPool(dev, cmd_pool, nullptr);
    vkDestroyDescriptorPool(dev, pool, nullptr);
    vkDestroyPipelineLayout(dev, pipeline_layout, nullptr);
    vkDestroyDescriptorSetLayout(dev, set_layout, nullptr);
    vkUnmapMemory(dev, stop_buf.memory);
    for (Buffer* b : {&mem, &stop_buf}) {
        vkDestroyBuffer(dev, b->buffer, nullptr);
        vkFreeMemory(dev, b->memory, nullptr);
    }
    vkDestroyDevice(dev, nullptr);
    vkDestroyInstance(instance, nullptr);
    return 0;
}
