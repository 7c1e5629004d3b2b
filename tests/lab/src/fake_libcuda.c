/*
 * gpudoctor lab: a stand-in for NVIDIA's libcuda.so.1 (the CUDA driver API), driven by a
 * scenario file (see lab_common.h and tests/lab/scenario.py). Test code only.
 *
 * ABI: every exported function has the signature of NVIDIA's cuda.h (CUDA 12/13 headers),
 * and every CUresult is the real number from `enum cudaError_enum`. Device "memory" is host
 * memory; the only kernel that runs is `vadd` (c[i] = a[i] + b[i] on float32).
 *
 * What the real driver does and this file emulates:
 *  - cuDriverGetVersion works before and without cuInit; other calls before a successful
 *    cuInit return CUDA_ERROR_NOT_INITIALIZED (3), also after a failed cuInit (observed on
 *    NVIDIA's 535 libcuda on a machine without the kernel module: cuInit -> 100, then
 *    cuDeviceGetCount -> 3). cuInit(flags != 0) -> CUDA_ERROR_INVALID_VALUE (observed too).
 *  - cuInit applies CUDA_DEVICE_ORDER and CUDA_VISIBLE_DEVICES (it is the driver that reads
 *    them), and returns CUDA_ERROR_NO_DEVICE (100) when no device is left visible.
 *  - cuGetErrorName/cuGetErrorString of an unknown code return CUDA_ERROR_INVALID_VALUE and
 *    set *pStr = NULL (observed on 535). Strings below are those of the 535 driver.
 *
 * CUDA_DEVICE_ORDER (CUDA C Programming Guide, "CUDA Environment Variables"):
 *   FASTEST_FIRST (default) orders devices fastest first by a driver heuristic; emulated by
 *   the scenario's per-GPU speed_rank (lower is faster; ties keep PCI order). PCI_BUS_ID
 *   orders them by PCI bus id, which is nvidia-smi's / NVML's order. Any other value is
 *   treated as the default.
 *
 * CUDA_VISIBLE_DEVICES, as implemented here (apply_visibility):
 *   Sources: CUDA C Programming Guide, "CUDA Environment Variables" (docs.nvidia.com/cuda/
 *   cuda-programming-guide/05-appendices/environment-variables.html, older editions:
 *   cuda-c-programming-guide/index.html#env-vars); the MPS guide's appendix on
 *   CUDA_VISIBLE_DEVICES (UUID prefixes "including GPU-"); the MIG user guide (MIG-<uuid>,
 *   one MIG device per CUDA process); and PyTorch's torch/cuda/__init__.py
 *   (_parse_visible_devices, _transform_uuid_to_ordinals; pytorch/pytorch PRs #84879 and
 *   #92315), which re-implements the driver's observed parsing for NVML-based device_count.
 *   - unset: every device, in CUDA_DEVICE_ORDER order;
 *   - set but empty: no device (documented);
 *   - a comma-separated list; each entry, after skipping surrounding white space, is
 *     - "GPU-<prefix>": the one GPU whose UUID starts with it (a unique prefix; an unknown
 *       or ambiguous prefix is invalid),
 *     - "MIG-<prefix>": the one MIG device whose UUID starts with it, likewise,
 *     - otherwise parsed like strtoul: an optional '+', then decimal digits, trailing junk
 *       ignored ("1gpu2" is 1; PyTorch's comment: "`1gpu2,2ampere` is equivalent to `1,2`");
 *       an index into the CUDA_DEVICE_ORDER-ordered list. A '-' sign, no digits, or an
 *       index >= the number of GPUs is invalid;
 *   - the first invalid entry ends the list: "0,2,-1,1" is devices 0 and 2 (documented);
 *     "-1" alone hides every device;
 *   - a device named twice makes the whole list empty ("0,0" -> no device; PyTorch:
 *     "Repeated ordinal results in empty set", "Duplicates result in empty set");
 *   - devices are enumerated in the order of the list ("2,1": device 2 becomes CUDA 0).
 *   MIG (approximation): a GPU in MIG mode is not a CUDA device itself; selecting it (or
 *   leaving the variable unset) selects its MIG devices, and, as the MIG user guide says
 *   a CUDA process enumerates a single MIG device, only the first MIG device selected stays.
 */
#define _GNU_SOURCE
#include "lab_common.h"

#include <ctype.h>
#include <stdint.h>

/* ---- types, exactly as cuda.h declares them ------------------------------------------- */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef int CUdevice_attribute;
typedef int CUjit_option;
typedef struct CUuuid_st {
    char bytes[16];
} CUuuid;

#define EXPORT __attribute__((visibility("default")))

/* CUresult values (cuda.h, enum cudaError_enum) */
enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_INVALID_PTX = 218,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
};

/* CUdevice_attribute values (cuda.h, enum CUdevice_attribute_enum) */
enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
    CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20,
    CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
    CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
    CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
    CU_DEVICE_ATTRIBUTE_TCC_DRIVER = 35,
    CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
    CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_KNOWN = 150, /* beyond the last attribute of CUDA 13.0's cuda.h */
};

/* ---- scenario-derived state ------------------------------------------------------------ */
#define MAX_GPUS 64
#define MAX_UNITS 256
#define MIB (1024ULL * 1024ULL)

struct unit { /* one CUDA device: a whole GPU, or a MIG device of a GPU */
    int gpu;
    int mig; /* -1: the whole GPU */
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_initialized = 0;
static struct unit g_vis[MAX_UNITS];
static int g_nvis = 0;
static unsigned long long g_used_by_us[MAX_UNITS]; /* bytes, per visible device */

static int ngpus(void) { return (int)lab_int(lab_get("gpu_count"), 0); }

static unsigned long long unit_total_bytes(struct unit u)
{
    if (u.mig >= 0)
        return (unsigned long long)lab_intf("gpu.%d.mig.%d.memory_total_mib", u.gpu, u.mig, 0) * MIB;
    return (unsigned long long)lab_intf("gpu.%d.memory_total_mib", u.gpu, 0, 0) * MIB;
}

static unsigned long long unit_used_bytes(struct unit u)
{
    if (u.mig >= 0)
        return 0; /* processes are accounted on the parent GPU */
    return (unsigned long long)lab_intf("gpu.%d.memory_used_mib", u.gpu, 0, 0) * MIB;
}

static unsigned long long context_bytes(void)
{
    return (unsigned long long)lab_int(lab_get("context_memory_mib"), 300) * MIB;
}

/* Physical GPUs in CUDA_DEVICE_ORDER order; returns their count. */
static int ordered_gpus(const char *order, int *out)
{
    int n = ngpus();
    if (n > MAX_GPUS)
        n = MAX_GPUS;
    for (int i = 0; i < n; i++)
        out[i] = i;
    if (order && strcmp(order, "PCI_BUS_ID") == 0)
        return n;
    /* FASTEST_FIRST: stable insertion sort by speed_rank */
    for (int i = 1; i < n; i++) {
        int v = out[i], j = i - 1;
        long long rv = lab_intf("gpu.%d.speed_rank", v, 0, v);
        while (j >= 0 && lab_intf("gpu.%d.speed_rank", out[j], 0, out[j]) > rv) {
            out[j + 1] = out[j];
            j--;
        }
        out[j + 1] = v;
    }
    return n;
}

static int gpu_in_mig_mode(int g) { return lab_intf("gpu.%d.mig_mode", g, 0, -1) == 1; }

static int starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* Resolve one CUDA_VISIBLE_DEVICES entry (already trimmed); 0 on success. */
static int resolve_entry(const char *tok, const int *order, int n, struct unit *out)
{
    if (starts_with(tok, "GPU-")) {
        int found = -1;
        for (int g = 0; g < n; g++) {
            const char *uuid = lab_getf("gpu.%d.uuid", g, 0);
            if (uuid && starts_with(uuid, tok)) {
                if (found >= 0)
                    return -1; /* ambiguous prefix */
                found = g;
            }
        }
        if (found < 0)
            return -1;
        out->gpu = found;
        out->mig = -1;
        return 0;
    }
    if (starts_with(tok, "MIG-")) {
        int fg = -1, fm = -1;
        for (int g = 0; g < n; g++) {
            int nm = (int)lab_intf("gpu.%d.mig_count", g, 0, 0);
            for (int m = 0; m < nm; m++) {
                const char *uuid = lab_getf("gpu.%d.mig.%d.uuid", g, m);
                if (uuid && starts_with(uuid, tok)) {
                    if (fg >= 0)
                        return -1;
                    fg = g;
                    fm = m;
                }
            }
        }
        if (fg < 0)
            return -1;
        out->gpu = fg;
        out->mig = fm;
        return 0;
    }
    /* strtoul-like: optional '+', decimal digits, rest ignored */
    const char *p = tok;
    if (*p == '+')
        p++;
    if (!isdigit((unsigned char)*p))
        return -1; /* includes a '-' sign and an empty entry */
    unsigned long long v = 0;
    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (unsigned long long)(*p - '0');
        if (v > 1000000)
            return -1;
        p++;
    }
    if (v >= (unsigned long long)n)
        return -1;
    out->gpu = order[v];
    out->mig = -1;
    return 0;
}

static int same_unit(struct unit a, struct unit b) { return a.gpu == b.gpu && a.mig == b.mig; }

/* The CUDA devices that CUDA_DEVICE_ORDER=order_env and CUDA_VISIBLE_DEVICES=cvd select
 * (NULL: the variable is unset), in CUDA's order; returns their count. */
static int compute_visibility(const char *cvd, const char *order_env, struct unit *vis, int max)
{
    int order[MAX_GPUS];
    int n = ordered_gpus(order_env, order);
    struct unit sel[MAX_UNITS];
    int nsel = 0;

    if (!cvd) {
        for (int i = 0; i < n; i++) {
            sel[nsel].gpu = order[i];
            sel[nsel].mig = -1;
            nsel++;
        }
    } else {
        char *copy = strdup(cvd);
        char *save = copy, *entry;
        int dup = 0;
        /* strsep keeps empty fields: "0,,1" stops at the empty entry */
        while (copy && (entry = strsep(&save, ",")) != NULL && nsel < MAX_UNITS) {
            while (*entry && isspace((unsigned char)*entry))
                entry++;
            size_t len = strlen(entry);
            while (len && isspace((unsigned char)entry[len - 1]))
                entry[--len] = '\0';
            struct unit u;
            if (resolve_entry(entry, order, n, &u) != 0)
                break;
            for (int k = 0; k < nsel; k++)
                if (same_unit(sel[k], u))
                    dup = 1;
            if (dup)
                break;
            sel[nsel++] = u;
        }
        free(copy);
        if (dup)
            nsel = 0;
    }

    /* MIG: GPUs in MIG mode expand to their MIG devices; one MIG device per process. */
    int nvis = 0;
    int have_mig = 0;
    for (int i = 0; i < nsel && nvis < max; i++) {
        struct unit u = sel[i];
        if (u.mig < 0 && gpu_in_mig_mode(u.gpu)) {
            if (lab_intf("gpu.%d.mig_count", u.gpu, 0, 0) == 0)
                continue;
            u.mig = 0;
        }
        if (u.mig >= 0) {
            if (have_mig)
                continue;
            have_mig = 1;
        }
        vis[nvis++] = u;
    }
    return nvis;
}

static void apply_visibility(void)
{
    g_nvis = compute_visibility(getenv("CUDA_VISIBLE_DEVICES"), getenv("CUDA_DEVICE_ORDER"), g_vis, MAX_UNITS);
    memset(g_used_by_us, 0, sizeof g_used_by_us);
}

/* Test hooks (not part of CUDA): the visibility rules on their own, for property tests that
 * compare them with a reference implementation in-process. */
EXPORT int gpudoctor_lab_visible_devices(const char *cvd, const char *order, int *gpus, int *migs, int max)
{
    struct unit vis[MAX_UNITS];
    if (max > MAX_UNITS)
        max = MAX_UNITS;
    int n = compute_visibility(cvd, order, vis, max);
    for (int i = 0; i < n; i++) {
        gpus[i] = vis[i].gpu;
        migs[i] = vis[i].mig;
    }
    return n;
}

EXPORT void gpudoctor_lab_reload(void) { lab_reload(); }

/* ---- error names and strings: every code NVIDIA's 535 driver names, with its text -------- */
struct errdesc {
    int code;
    const char *name;
    const char *text;
};
static const struct errdesc g_errors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {5, "CUDA_ERROR_PROFILER_DISABLED", "profiler disabled while using external profiling tool"},
    {6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED", "profiler not initialized: call cudaProfilerInitialize()"},
    {7, "CUDA_ERROR_PROFILER_ALREADY_STARTED", "profiler already started"},
    {8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED", "profiler already stopped"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {102, "CUDA_ERROR_DEVICE_NOT_LICENSED", "device doesn't have valid Grid license"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", "context already current"},
    {205, "CUDA_ERROR_MAP_FAILED", "mapping of buffer object failed"},
    {206, "CUDA_ERROR_UNMAP_FAILED", "unmapping of buffer object failed"},
    {207, "CUDA_ERROR_ARRAY_IS_MAPPED", "array is mapped"},
    {208, "CUDA_ERROR_ALREADY_MAPPED", "resource already mapped"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
    {210, "CUDA_ERROR_ALREADY_ACQUIRED", "resource already acquired"},
    {211, "CUDA_ERROR_NOT_MAPPED", "resource not mapped"},
    {212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", "resource not mapped as array"},
    {213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER", "resource not mapped as pointer"},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE", "uncorrectable ECC error encountered"},
    {215, "CUDA_ERROR_UNSUPPORTED_LIMIT", "limit is not supported on this architecture"},
    {216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", "exclusive-thread device already in use by a different thread"},
    {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "peer access is not supported between these two devices"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", "invalid OpenGL or DirectX context"},
    {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE", "uncorrectable NVLink error detected during the execution"},
    {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "PTX JIT compiler library not found"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."},
    {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED", "PTX JIT compilation was disabled"},
    {224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", "the provided execution affinity is not supported"},
    {225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", "the provided PTX contains unsupported call to cudaDeviceSynchronize"},
    {300, "CUDA_ERROR_INVALID_SOURCE", "device kernel image is invalid"},
    {301, "CUDA_ERROR_FILE_NOT_FOUND", "file not found"},
    {302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", "shared object symbol not found"},
    {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", "shared object initialization failed"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {401, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
    {703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", "launch uses incompatible texturing mode"},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already enabled"},
    {705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "peer access has not been enabled"},
    {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", "cannot set while device is active in this process"},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
    {710, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
    {711, "CUDA_ERROR_TOO_MANY_PEERS", "peer mapping resources exhausted"},
    {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "part or all of the requested memory range is already mapped"},
    {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "pointer does not correspond to a registered memory region"},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
    {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", "operation not supported on global/shared address space"},
    {718, "CUDA_ERROR_INVALID_PC", "invalid program counter"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "too many blocks in cooperative launch"},
    {800, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility was attempted on non supported HW"},
    {805, "CUDA_ERROR_MPS_CONNECTION_FAILED", "MPS client failed to connect to the MPS control daemon or the MPS server"},
    {806, "CUDA_ERROR_MPS_RPC_FAILURE", "the remote procedural call between the MPS server and the MPS client failed"},
    {807, "CUDA_ERROR_MPS_SERVER_NOT_READY", "MPS server is not ready to accept new MPS client requests"},
    {808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", "the hardware resources required to create MPS client have been exhausted"},
    {809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED", "the hardware resources required to support device connections have been exhausted"},
    {810, "CUDA_ERROR_MPS_CLIENT_TERMINATED", "the MPS client has been terminated by the server"},
    {811, "CUDA_ERROR_CDP_NOT_SUPPORTED", "is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it"},
    {812, "CUDA_ERROR_CDP_VERSION_MISMATCH", "unsupported interaction between different versions of CUDA Dynamic Parallelism"},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture"},
    {902, "CUDA_ERROR_STREAM_CAPTURE_MERGE", "operation would result in a merge of separate capture sequences"},
    {903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", "capture was not ended in the same stream as it began"},
    {904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", "capturing stream has unjoined work"},
    {905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", "dependency created on uncaptured work in another stream"},
    {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", "operation would make the legacy stream depend on a capturing blocking stream"},
    {907, "CUDA_ERROR_CAPTURED_EVENT", "operation not permitted on an event last recorded in a capturing stream"},
    {908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", "attempt to terminate a thread-local capture sequence from another thread"},
    {909, "CUDA_ERROR_TIMEOUT", "wait operation timed out"},
    {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"},
    {911, "CUDA_ERROR_EXTERNAL_DEVICE", "an async error has occured in external entity outside of CUDA"},
    {912, "CUDA_ERROR_INVALID_CLUSTER_SIZE", "a kernel launch error has occurred due to cluster misconfiguration"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static const struct errdesc *find_error(int code)
{
    for (size_t i = 0; i < sizeof g_errors / sizeof g_errors[0]; i++)
        if (g_errors[i].code == code)
            return &g_errors[i];
    return NULL;
}

EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    LAB_FAULT("cuGetErrorName");
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    const struct errdesc *e = find_error(error);
    *pStr = e ? e->name : NULL;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    LAB_FAULT("cuGetErrorString");
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    const struct errdesc *e = find_error(error);
    *pStr = e ? e->text : NULL;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- initialisation and devices -------------------------------------------------------- */
EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
    LAB_FAULT("cuDriverGetVersion");
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = (int)lab_int(lab_get("cuda_driver_version"), 12020);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuInit(unsigned int Flags)
{
    LAB_FAULT("cuInit");
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    lab_load();
    pthread_mutex_lock(&g_lock);
    if (!lab_loaded) {
        /* no scenario: a machine without a GPU */
        pthread_mutex_unlock(&g_lock);
        return CUDA_ERROR_NO_DEVICE;
    }
    if (!g_initialized)
        apply_visibility();
    if (g_nvis == 0) {
        pthread_mutex_unlock(&g_lock);
        return CUDA_ERROR_NO_DEVICE;
    }
    g_initialized = 1;
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

#define NEED_INIT()                                                                              \
    do {                                                                                         \
        if (!g_initialized)                                                                      \
            return CUDA_ERROR_NOT_INITIALIZED;                                                   \
    } while (0)
#define NEED_DEV(d)                                                                              \
    do {                                                                                         \
        if ((d) < 0 || (d) >= g_nvis)                                                            \
            return CUDA_ERROR_INVALID_DEVICE;                                                    \
    } while (0)

EXPORT CUresult cuDeviceGetCount(int *count)
{
    LAB_FAULT("cuDeviceGetCount");
    NEED_INIT();
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = g_nvis;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    LAB_FAULT("cuDeviceGet");
    NEED_INIT();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    NEED_DEV(ordinal);
    *device = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    LAB_FAULT("cuDeviceGetName");
    NEED_INIT();
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    NEED_DEV(dev);
    struct unit u = g_vis[dev];
    const char *gname = lab_getf("gpu.%d.name", u.gpu, 0);
    if (u.mig >= 0) /* e.g. "NVIDIA A100-SXM4-40GB MIG 1g.5gb" */
        snprintf(name, (size_t)len, "%s MIG %s", gname ? gname : "", lab_getf("gpu.%d.mig.%d.profile", u.gpu, u.mig));
    else
        snprintf(name, (size_t)len, "%s", gname ? gname : "");
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    LAB_FAULT("cuDeviceGetAttribute");
    NEED_INIT();
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    NEED_DEV(dev);
    int g = g_vis[dev].gpu;
    int v = 0;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = (int)lab_intf("gpu.%d.cc_major", g, 0, 0); break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = (int)lab_intf("gpu.%d.cc_minor", g, 0, 0); break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: v = (int)lab_intf("gpu.%d.pci_domain", g, 0, 0); break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: v = (int)lab_intf("gpu.%d.pci_bus", g, 0, 0); break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: v = (int)lab_intf("gpu.%d.pci_device", g, 0, 0); break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        v = (int)lab_intf("gpu.%d.multiprocessor_count", g, 0, 1);
        if (g_vis[dev].mig >= 0) /* a MIG slice has a fraction of the SMs */
            v = v / 7 > 0 ? v / 7 : 1;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: v = 1545000; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED:
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
    case CU_DEVICE_ATTRIBUTE_TCC_DRIVER: v = 0; break;
    default:
        if (attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX_KNOWN)
            return CUDA_ERROR_INVALID_VALUE;
        v = 0; /* a real attribute the lab does not model */
    }
    *pi = v;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    LAB_FAULT("cuDeviceTotalMem_v2");
    NEED_INIT();
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    NEED_DEV(dev);
    *bytes = (size_t)unit_total_bytes(g_vis[dev]);
    return CUDA_SUCCESS;
}

static CUresult get_uuid(CUuuid *uuid, CUdevice dev, int mig_aware)
{
    NEED_INIT();
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    NEED_DEV(dev);
    struct unit u = g_vis[dev];
    const char *s = (mig_aware && u.mig >= 0) ? lab_getf("gpu.%d.mig.%d.uuid", u.gpu, u.mig)
                                              : lab_getf("gpu.%d.uuid", u.gpu, 0);
    if (!s || lab_uuid_bytes(s, (unsigned char *)uuid->bytes) != 0)
        memset(uuid->bytes, 0, 16);
    return CUDA_SUCCESS;
}

/* cuDeviceGetUuid returns the GPU's UUID; _v2 returns a MIG device's own UUID (cuda.h). */
EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    LAB_FAULT2("cuDeviceGetUuid", NULL);
    return get_uuid(uuid, dev, 0);
}

EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    LAB_FAULT("cuDeviceGetUuid_v2");
    return get_uuid(uuid, dev, 1);
}

/* "[domain]:[bus]:[device].[function]" in hex, e.g. "0000:3B:00.0" (upper case: TensorFlow
 * lower-cases this string "to match sysfs"). */
EXPORT CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    LAB_FAULT("cuDeviceGetPCIBusId");
    NEED_INIT();
    if (!pciBusId || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    NEED_DEV(dev);
    int g = g_vis[dev].gpu;
    snprintf(pciBusId, (size_t)len, "%04X:%02X:%02X.0", (unsigned)lab_intf("gpu.%d.pci_domain", g, 0, 0),
             (unsigned)lab_intf("gpu.%d.pci_bus", g, 0, 0), (unsigned)lab_intf("gpu.%d.pci_device", g, 0, 0));
    return CUDA_SUCCESS;
}

/* ---- contexts --------------------------------------------------------------------------- */
#define CTX_MAGIC 0x43545843u /* "CXTC" */
struct CUctx_st {
    unsigned magic;
    int dev;
    int primary;
    int refcount; /* primary contexts */
    int sticky;   /* a kernel fault poisons the context, as on a real GPU */
    struct CUctx_st *prev;
};

static __thread struct CUctx_st *t_current = NULL;
static struct CUctx_st *g_primary[MAX_UNITS];

static int ctx_valid(struct CUctx_st *c) { return c && c->magic == CTX_MAGIC; }

static unsigned long long free_bytes(int dev)
{
    struct unit u = g_vis[dev];
    unsigned long long total = unit_total_bytes(u), used = unit_used_bytes(u) + g_used_by_us[dev];
    return used >= total ? 0 : total - used;
}

/* A context takes device memory; on a full GPU creating one fails with OUT_OF_MEMORY. */
static CUresult new_context(int dev, int primary, struct CUctx_st **out)
{
    if (free_bytes(dev) < context_bytes())
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct CUctx_st *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->magic = CTX_MAGIC;
    c->dev = dev;
    c->primary = primary;
    g_used_by_us[dev] += context_bytes();
    *out = c;
    return CUDA_SUCCESS;
}

static void free_context_allocs(struct CUctx_st *c);

static void drop_context(struct CUctx_st *c)
{
    free_context_allocs(c);
    g_used_by_us[c->dev] -= context_bytes();
    if (t_current == c)
        t_current = c->prev && ctx_valid(c->prev) ? c->prev : NULL;
    c->magic = 0;
    free(c);
}

EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    (void)flags;
    LAB_FAULT("cuCtxCreate_v2");
    NEED_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    NEED_DEV(dev);
    pthread_mutex_lock(&g_lock);
    struct CUctx_st *c = NULL;
    CUresult r = new_context(dev, 0, &c);
    pthread_mutex_unlock(&g_lock);
    if (r != CUDA_SUCCESS)
        return r;
    c->prev = t_current; /* cuCtxCreate pushes the new context on this thread's stack */
    t_current = c;
    *pctx = c;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    LAB_FAULT("cuCtxDestroy_v2");
    NEED_INIT();
    if (!ctx_valid(ctx) || ctx->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&g_lock);
    drop_context(ctx);
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    LAB_FAULT("cuCtxSetCurrent");
    NEED_INIT();
    if (ctx && !ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    t_current = ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    LAB_FAULT("cuCtxGetCurrent");
    NEED_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = ctx_valid(t_current) ? t_current : NULL;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
    LAB_FAULT("cuCtxGetDevice");
    NEED_INIT();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (!ctx_valid(t_current))
        return CUDA_ERROR_INVALID_CONTEXT;
    *device = t_current->dev;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    LAB_FAULT("cuDevicePrimaryCtxRetain");
    NEED_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    NEED_DEV(dev);
    pthread_mutex_lock(&g_lock);
    CUresult r = CUDA_SUCCESS;
    if (!g_primary[dev])
        r = new_context(dev, 1, &g_primary[dev]);
    if (r == CUDA_SUCCESS) {
        g_primary[dev]->refcount++;
        *pctx = g_primary[dev];
    }
    pthread_mutex_unlock(&g_lock);
    return r;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    LAB_FAULT("cuDevicePrimaryCtxRelease_v2");
    NEED_INIT();
    NEED_DEV(dev);
    pthread_mutex_lock(&g_lock);
    struct CUctx_st *c = g_primary[dev];
    if (!c) {
        pthread_mutex_unlock(&g_lock);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (--c->refcount == 0) {
        g_primary[dev] = NULL;
        drop_context(c);
    }
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }

#define NEED_CTX()                                                                               \
    do {                                                                                         \
        if (!ctx_valid(t_current))                                                               \
            return CUDA_ERROR_INVALID_CONTEXT;                                                   \
        if (t_current->sticky)                                                                   \
            return t_current->sticky;                                                            \
    } while (0)

EXPORT CUresult cuCtxSynchronize(void)
{
    LAB_FAULT("cuCtxSynchronize");
    NEED_INIT();
    NEED_CTX();
    return CUDA_SUCCESS;
}

/* ---- memory ----------------------------------------------------------------------------- */
struct alloc {
    unsigned char *p;
    size_t n;
    struct CUctx_st *ctx;
    struct alloc *next;
};
static struct alloc *g_allocs = NULL;

static void free_context_allocs(struct CUctx_st *c)
{
    struct alloc **pp = &g_allocs;
    while (*pp) {
        struct alloc *a = *pp;
        if (a->ctx == c) {
            g_used_by_us[c->dev] -= a->n;
            *pp = a->next;
            free(a->p);
            free(a);
        } else {
            pp = &a->next;
        }
    }
}

/* The allocation holding [ptr, ptr+n), or NULL. Caller holds g_lock. */
static struct alloc *find_alloc(CUdeviceptr ptr, size_t n)
{
    for (struct alloc *a = g_allocs; a; a = a->next) {
        uintptr_t base = (uintptr_t)a->p;
        if (ptr >= base && ptr + n <= base + a->n && ptr + n >= ptr)
            return a;
    }
    return NULL;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
{
    LAB_FAULT("cuMemGetInfo_v2");
    NEED_INIT();
    NEED_CTX();
    if (!free || !total)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    *free = (size_t)free_bytes(t_current->dev);
    *total = (size_t)unit_total_bytes(g_vis[t_current->dev]);
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    LAB_FAULT("cuMemAlloc_v2");
    NEED_INIT();
    NEED_CTX();
    if (!dptr || bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    CUresult r = CUDA_SUCCESS;
    if (bytesize > free_bytes(t_current->dev)) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        struct alloc *a = calloc(1, sizeof *a);
        unsigned char *p = malloc(bytesize);
        if (!a || !p) {
            free(a);
            free(p);
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            memset(p, 0xA5, bytesize); /* device memory is not zeroed */
            a->p = p;
            a->n = bytesize;
            a->ctx = t_current;
            a->next = g_allocs;
            g_allocs = a;
            g_used_by_us[t_current->dev] += bytesize;
            *dptr = (CUdeviceptr)(uintptr_t)p;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return r;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    LAB_FAULT("cuMemFree_v2");
    NEED_INIT();
    NEED_CTX();
    pthread_mutex_lock(&g_lock);
    struct alloc **pp = &g_allocs;
    while (*pp && (uintptr_t)(*pp)->p != dptr)
        pp = &(*pp)->next;
    if (!*pp) {
        pthread_mutex_unlock(&g_lock);
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct alloc *a = *pp;
    *pp = a->next;
    g_used_by_us[a->ctx->dev] -= a->n;
    free(a->p);
    free(a);
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    LAB_FAULT("cuMemcpyHtoD_v2");
    NEED_INIT();
    NEED_CTX();
    if (ByteCount == 0)
        return CUDA_SUCCESS;
    if (!srcHost)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct alloc *a = find_alloc(dstDevice, ByteCount);
    if (a)
        memcpy((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
    pthread_mutex_unlock(&g_lock);
    return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    LAB_FAULT("cuMemcpyDtoH_v2");
    NEED_INIT();
    NEED_CTX();
    if (ByteCount == 0)
        return CUDA_SUCCESS;
    if (!dstHost)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct alloc *a = find_alloc(srcDevice, ByteCount);
    if (a)
        memcpy(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount);
    pthread_mutex_unlock(&g_lock);
    return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- modules and kernels ---------------------------------------------------------------- */
#define MOD_MAGIC 0x4d4f4455u
#define FUNC_MAGIC 0x46554e43u
#define MAX_ENTRIES 32
struct CUfunc_st {
    unsigned magic;
    struct CUmod_st *mod;
    char name[128];
};
struct CUmod_st {
    unsigned magic;
    struct CUctx_st *ctx;
    int nfunc;
    struct CUfunc_st funcs[MAX_ENTRIES];
};

/* The newest PTX ISA a driver's JIT accepts, by the CUDA version the driver supports
 * (PTX ISA document, "Release Notes": PTX ISA x.y ships with CUDA a.b). */
static int max_ptx_isa(int cuda)
{
    static const int table[][2] = {
        {9000, 60},  {9010, 61},  {9020, 62},  {10000, 63}, {10010, 64}, {10020, 65}, {11000, 70},
        {11010, 71}, {11020, 72}, {11030, 73}, {11040, 74}, {11050, 75}, {11060, 76}, {11070, 77},
        {11080, 78}, {12000, 80}, {12010, 81}, {12020, 82}, {12030, 83}, {12040, 84}, {12050, 85},
        {12060, 85}, {12080, 87}, {12090, 88}, {13000, 90},
    };
    int best = 0;
    size_t n = sizeof table / sizeof table[0];
    if (cuda > table[n - 1][0])
        return 1000; /* newer than the table: accept anything */
    for (size_t i = 0; i < n; i++)
        if (table[i][0] <= cuda)
            best = table[i][1];
    return best;
}

static CUresult load_module(CUmodule *module, const void *image)
{
    NEED_INIT();
    NEED_CTX();
    if (!module || !image)
        return CUDA_ERROR_INVALID_VALUE;
    const char *ptx = image;
    if (memcmp(ptx, "\177ELF", 4) == 0)
        return CUDA_ERROR_NO_BINARY_FOR_GPU; /* the lab runs PTX only */
    if (!strstr(ptx, ".version") || !strstr(ptx, ".target"))
        return CUDA_ERROR_INVALID_PTX;
    int vmaj = 0, vmin = 0, sm = 0;
    const char *p = strstr(ptx, ".version");
    if (sscanf(p, ".version %d.%d", &vmaj, &vmin) != 2)
        return CUDA_ERROR_INVALID_PTX;
    int cuda = (int)lab_int(lab_get("cuda_driver_version"), 12020);
    if (vmaj * 10 + vmin > max_ptx_isa(cuda))
        return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    p = strstr(ptx, ".target");
    if (sscanf(p, ".target sm_%d", &sm) == 1) {
        int g = g_vis[t_current->dev].gpu;
        int cc = (int)(lab_intf("gpu.%d.cc_major", g, 0, 0) * 10 + lab_intf("gpu.%d.cc_minor", g, 0, 0));
        if (sm > cc)
            return CUDA_ERROR_INVALID_PTX; /* ptxas: target newer than the GPU */
    }
    struct CUmod_st *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->magic = MOD_MAGIC;
    m->ctx = t_current;
    for (p = strstr(ptx, ".entry"); p && m->nfunc < MAX_ENTRIES; p = strstr(p + 6, ".entry")) {
        const char *q = p + 6;
        while (*q == ' ' || *q == '\t')
            q++;
        size_t n = 0;
        while ((isalnum((unsigned char)q[n]) || q[n] == '_' || q[n] == '$') && n < 127)
            n++;
        if (n == 0)
            continue;
        struct CUfunc_st *f = &m->funcs[m->nfunc++];
        f->magic = FUNC_MAGIC;
        f->mod = m;
        memcpy(f->name, q, n);
        f->name[n] = '\0';
    }
    *module = m;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    LAB_FAULT("cuModuleLoadData");
    return load_module(module, image);
}

EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                   CUjit_option *options, void **optionValues)
{
    (void)numOptions;
    (void)options;
    (void)optionValues;
    LAB_FAULT2("cuModuleLoadDataEx", "cuModuleLoadData");
    return load_module(module, image);
}

EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    LAB_FAULT("cuModuleGetFunction");
    NEED_INIT();
    NEED_CTX();
    if (!hfunc || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!hmod || hmod->magic != MOD_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < hmod->nfunc; i++)
        if (strcmp(hmod->funcs[i].name, name) == 0) {
            *hfunc = &hmod->funcs[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuModuleUnload(CUmodule hmod)
{
    LAB_FAULT("cuModuleUnload");
    NEED_INIT();
    if (!hmod || hmod->magic != MOD_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < hmod->nfunc; i++)
        hmod->funcs[i].magic = 0;
    hmod->magic = 0;
    free(hmod);
    return CUDA_SUCCESS;
}

/* vadd(const float *a, const float *b, float *c, unsigned n): i = blockIdx.x * blockDim.x +
 * threadIdx.x; if (i < n) c[i] = a[i] + b[i]. */
static CUresult run_vadd(int dev, unsigned threads_x, void **kernelParams)
{
    if (!kernelParams || !kernelParams[0] || !kernelParams[1] || !kernelParams[2] || !kernelParams[3])
        return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr a = *(CUdeviceptr *)kernelParams[0], b = *(CUdeviceptr *)kernelParams[1],
                c = *(CUdeviceptr *)kernelParams[2];
    unsigned n = *(unsigned *)kernelParams[3];
    unsigned count = n < threads_x ? n : threads_x;
    int g = g_vis[dev].gpu;
    const char *mode = lab_getf("gpu.%d.kernel", g, 0);
    if (mode && isdigit((unsigned char)mode[0]) && lab_int(mode, 0) != 0) {
        t_current->sticky = (int)lab_int(mode, 0); /* reported by the next synchronising call */
        return CUDA_SUCCESS;
    }
    size_t bytes = (size_t)count * sizeof(float);
    pthread_mutex_lock(&g_lock);
    int ok = count == 0 || (find_alloc(a, bytes) && find_alloc(b, bytes) && find_alloc(c, bytes));
    pthread_mutex_unlock(&g_lock);
    if (!ok) {
        t_current->sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
        return CUDA_SUCCESS;
    }
    const float *fa = (const float *)(uintptr_t)a, *fb = (const float *)(uintptr_t)b;
    float *fc = (float *)(uintptr_t)c;
    float wrong = (mode && strcmp(mode, "wrong") == 0) ? 1.0f : 0.0f;
    for (unsigned i = 0; i < count; i++)
        fc[i] = fa[i] + fb[i] + wrong;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                               unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                               unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    (void)sharedMemBytes;
    (void)hStream;
    (void)extra;
    LAB_FAULT("cuLaunchKernel");
    NEED_INIT();
    NEED_CTX();
    if (!f || f->magic != FUNC_MAGIC || !f->mod || f->mod->magic != MOD_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (f->mod->ctx != t_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!gridDimX || !gridDimY || !gridDimZ || !blockDimX || !blockDimY || !blockDimZ)
        return CUDA_ERROR_INVALID_VALUE;
    if ((unsigned long long)blockDimX * blockDimY * blockDimZ > 1024 || blockDimZ > 64)
        return CUDA_ERROR_INVALID_VALUE;
    if (strcmp(f->name, "vadd") == 0) {
        unsigned long long tx = (unsigned long long)gridDimX * blockDimX;
        return run_vadd(t_current->dev, tx > 0xFFFFFFFFull ? 0xFFFFFFFFu : (unsigned)tx, kernelParams);
    }
    return CUDA_SUCCESS; /* any other kernel: the lab does nothing and reports success */
}
