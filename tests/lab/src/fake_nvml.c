/*
 * gpudoctor lab: a stand-in for NVIDIA's libnvidia-ml.so.1 (NVML), driven by a scenario
 * file (see lab_common.h and tests/lab/scenario.py). Test code only.
 *
 * ABI: the signatures, structures, struct versions and nvmlReturn_t numbers of NVIDIA's
 * nvml.h, as NVIDIA's own Python binding (nvidia-ml-py's pynvml.py) declares them; pynvml
 * resolves each function by name on first use (nvmlInitWithFlags, nvmlInit_v2,
 * nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetPciInfo_v3,
 * nvmlDeviceGetMemoryInfo and _v2, nvmlDeviceGetComputeRunningProcesses_v3, ...).
 * A function this file lacks makes pynvml raise NVMLError_FunctionNotFound, as an old
 * real driver does.
 *
 * Behaviour of the real library that is emulated:
 *  - every call but nvmlErrorString / nvmlSystemGetNVMLVersion needs a successful init
 *    first, else NVML_ERROR_UNINITIALIZED (1) (observed on NVIDIA's 535 library);
 *  - nvmlErrorString answers the 535 library's strings (e.g. 18 -> "Driver/library version
 *    mismatch"; codes it does not know -> "Unknown Error");
 *  - NVML ignores CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER: devices are numbered in PCI
 *    bus order, as nvidia-smi shows them;
 *  - buffers too small -> NVML_ERROR_INSUFFICIENT_SIZE; process lists follow the two-call
 *    protocol (count query with infos == NULL -> NVML_ERROR_INSUFFICIENT_SIZE and the count).
 */
#define _GNU_SOURCE
#include "lab_common.h"

#include <ctype.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef int nvmlEnableState_t;

#define EXPORT __attribute__((visibility("default")))

/* nvmlReturn_t (nvml.h) */
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
};

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_VALUE_NOT_AVAILABLE_UINT 0xFFFFFFFFu

typedef struct { /* nvmlPciInfo_t (used by _v2 and _v3) */
    char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;    /* (device id << 16) | vendor id */
    unsigned int pciSubSystemId; /* (subsystem device id << 16) | subsystem vendor id */
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct { /* the v1 layout used by nvmlDeviceGetPciInfo */
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    unsigned int reserved0, reserved1, reserved2, reserved3;
} nvmlPciInfo_v1_t;

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
/* NVML_STRUCT_VERSION(Memory, 2) = sizeof(nvmlMemory_v2_t) | (2 << 24) */
#define nvmlMemory_v2 ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct { /* nvmlProcessInfo_v2_t == the struct of the _v3 calls */
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;

#define MIB (1024ULL * 1024ULL)
#define MAX_GPUS 64

/* A handle is a pointer into this array. */
struct nvmlDevice_st {
    int index;
};
static struct nvmlDevice_st g_devs[MAX_GPUS];
static int g_refcount = 0;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static int ngpus(void)
{
    int n = (int)lab_int(lab_get("gpu_count"), 0);
    return n > MAX_GPUS ? MAX_GPUS : n;
}

static int dev_index(nvmlDevice_t d)
{
    if (d < &g_devs[0] || d >= &g_devs[ngpus()])
        return -1;
    return d->index;
}

#define NEED_INIT()                                                                              \
    do {                                                                                         \
        if (g_refcount <= 0)                                                                     \
            return NVML_ERROR_UNINITIALIZED;                                                     \
    } while (0)
#define NEED_DEV(d, i)                                                                           \
    int i = dev_index(d);                                                                        \
    if (i < 0)                                                                                   \
    return NVML_ERROR_INVALID_ARGUMENT

static nvmlReturn_t copy_str(char *out, unsigned int len, const char *s)
{
    if (!out)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!s)
        s = "";
    if (strlen(s) + 1 > len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, s, strlen(s) + 1);
    return NVML_SUCCESS;
}

/* ---- errors ----------------------------------------------------------------------------- */
EXPORT const char *nvmlErrorString(nvmlReturn_t result)
{
    /* the strings of NVIDIA's 535 library */
    static const char *const s[] = {
        "Success", "Uninitialized", "Invalid Argument", "Not Supported", "Insufficient Permissions",
        "Already Initialized", "Not Found", "Insufficient Size", "Insufficient External Power",
        "Driver Not Loaded", "Timeout", "Interrupt Request Issue", "NVML Shared Library Not Found",
        "Function Not Found", "Corrupted infoROM", "GPU is lost", "GPU requires reset",
        "GPU access blocked by the operating system", "Driver/library version mismatch",
        "In use by another client", "Insufficient Memory", "No data", "vGPU ECC not supported",
        "Insufficient Resources", "Invalid Frequency", "Argument version mismatch",
        "Requested functionality has been deprecated", "System is not in ready state",
    };
    if (result >= 0 && (size_t)result < sizeof s / sizeof s[0])
        return s[result];
    return "Unknown Error";
}

/* ---- init ------------------------------------------------------------------------------- */
static nvmlReturn_t do_init(void)
{
    lab_load();
    if (!lab_loaded)
        return NVML_ERROR_DRIVER_NOT_LOADED; /* no scenario: no driver */
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_GPUS; i++)
        g_devs[i].index = i;
    g_refcount++;
    pthread_mutex_unlock(&g_lock);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlInit(void)
{
    LAB_FAULT("nvmlInit");
    return do_init();
}

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    LAB_FAULT("nvmlInit_v2");
    return do_init();
}

EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    (void)flags;
    LAB_FAULT2("nvmlInitWithFlags", "nvmlInit");
    return do_init();
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
    LAB_FAULT("nvmlShutdown");
    pthread_mutex_lock(&g_lock);
    int was = g_refcount;
    if (g_refcount > 0)
        g_refcount--;
    pthread_mutex_unlock(&g_lock);
    return was > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

/* ---- system ----------------------------------------------------------------------------- */
EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    LAB_FAULT("nvmlSystemGetDriverVersion");
    NEED_INIT();
    return copy_str(version, length, lab_get("driver_version"));
}

/* e.g. "12.535.183.01": the CUDA major version, then the driver version */
EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
    LAB_FAULT("nvmlSystemGetNVMLVersion");
    char buf[96];
    snprintf(buf, sizeof buf, "%d.%s", (int)(lab_int(lab_get("cuda_driver_version"), 12020) / 1000),
             lab_get("driver_version") ? lab_get("driver_version") : "");
    return copy_str(version, length, buf);
}

static nvmlReturn_t cuda_version(int *v)
{
    NEED_INIT();
    if (!v)
        return NVML_ERROR_INVALID_ARGUMENT;
    *v = (int)lab_int(lab_get("cuda_driver_version"), 12020);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
    LAB_FAULT("nvmlSystemGetCudaDriverVersion");
    return cuda_version(cudaDriverVersion);
}

EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
    LAB_FAULT("nvmlSystemGetCudaDriverVersion_v2");
    return cuda_version(cudaDriverVersion);
}

EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length)
{
    LAB_FAULT("nvmlSystemGetProcessName");
    NEED_INIT();
    for (int g = 0; g < ngpus(); g++) {
        int np = (int)lab_intf("gpu.%d.process_count", g, 0, 0);
        for (int p = 0; p < np; p++)
            if (lab_intf("gpu.%d.process.%d.pid", g, p, -1) == (long long)pid)
                return copy_str(name, length, lab_getf("gpu.%d.process.%d.name", g, p));
    }
    return NVML_ERROR_NOT_FOUND;
}

/* ---- devices ---------------------------------------------------------------------------- */
static nvmlReturn_t get_count(unsigned int *deviceCount)
{
    NEED_INIT();
    if (!deviceCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    *deviceCount = (unsigned)ngpus();
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
    LAB_FAULT("nvmlDeviceGetCount");
    return get_count(deviceCount);
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    LAB_FAULT("nvmlDeviceGetCount_v2");
    return get_count(deviceCount);
}

static nvmlReturn_t handle_by_index(unsigned int index, nvmlDevice_t *device)
{
    NEED_INIT();
    if (!device || index >= (unsigned)ngpus())
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &g_devs[index];
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    LAB_FAULT("nvmlDeviceGetHandleByIndex");
    return handle_by_index(index, device);
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    LAB_FAULT("nvmlDeviceGetHandleByIndex_v2");
    return handle_by_index(index, device);
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    LAB_FAULT("nvmlDeviceGetHandleByUUID");
    NEED_INIT();
    if (!uuid || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (int g = 0; g < ngpus(); g++) {
        const char *u = lab_getf("gpu.%d.uuid", g, 0);
        if (u && strcmp(u, uuid) == 0) {
            *device = &g_devs[g];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

static nvmlReturn_t handle_by_bus_id(const char *busId, nvmlDevice_t *device)
{
    NEED_INIT();
    unsigned d = 0, b = 0, s = 0, f = 0;
    if (!busId || !device || sscanf(busId, "%x:%x:%x.%x", &d, &b, &s, &f) != 4)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (int g = 0; g < ngpus(); g++)
        if (lab_intf("gpu.%d.pci_domain", g, 0, 0) == d && lab_intf("gpu.%d.pci_bus", g, 0, 0) == b &&
            lab_intf("gpu.%d.pci_device", g, 0, 0) == s) {
            *device = &g_devs[g];
            return NVML_SUCCESS;
        }
    return NVML_ERROR_NOT_FOUND;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device)
{
    LAB_FAULT("nvmlDeviceGetHandleByPciBusId");
    return handle_by_bus_id(pciBusId, device);
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
    LAB_FAULT("nvmlDeviceGetHandleByPciBusId_v2");
    return handle_by_bus_id(pciBusId, device);
}

EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    LAB_FAULT("nvmlDeviceGetIndex");
    NEED_INIT();
    NEED_DEV(device, g);
    if (!index)
        return NVML_ERROR_INVALID_ARGUMENT;
    *index = (unsigned)g;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber)
{
    LAB_FAULT("nvmlDeviceGetMinorNumber");
    NEED_INIT();
    NEED_DEV(device, g);
    if (!minorNumber)
        return NVML_ERROR_INVALID_ARGUMENT;
    *minorNumber = (unsigned)g; /* /dev/nvidia<minor> */
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    LAB_FAULT("nvmlDeviceGetName");
    NEED_INIT();
    NEED_DEV(device, g);
    return copy_str(name, length, lab_getf("gpu.%d.name", g, 0));
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    LAB_FAULT("nvmlDeviceGetUUID");
    NEED_INIT();
    NEED_DEV(device, g);
    return copy_str(uuid, length, lab_getf("gpu.%d.uuid", g, 0));
}

static void fill_pci(int g, unsigned *dom, unsigned *bus, unsigned *dev, unsigned *did, unsigned *sid)
{
    *dom = (unsigned)lab_intf("gpu.%d.pci_domain", g, 0, 0);
    *bus = (unsigned)lab_intf("gpu.%d.pci_bus", g, 0, 0);
    *dev = (unsigned)lab_intf("gpu.%d.pci_device", g, 0, 0);
    *did = ((unsigned)lab_intf("gpu.%d.pci_device_id", g, 0, 0) << 16) | 0x10DEu;
    *sid = (unsigned)lab_intf("gpu.%d.pci_subsystem_id", g, 0, 0);
}

static nvmlReturn_t pci_info(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    NEED_INIT();
    NEED_DEV(device, g);
    if (!pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof *pci);
    fill_pci(g, &pci->domain, &pci->bus, &pci->device, &pci->pciDeviceId, &pci->pciSubSystemId);
    /* nvidia-smi's form, "00000000:01:00.0"; the legacy field has a 4-digit domain */
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", pci->domain, pci->bus, pci->device);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", pci->domain, pci->bus, pci->device);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    LAB_FAULT("nvmlDeviceGetPciInfo_v3");
    return pci_info(device, pci);
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    LAB_FAULT("nvmlDeviceGetPciInfo_v2");
    return pci_info(device, pci);
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_v1_t *pci)
{
    LAB_FAULT("nvmlDeviceGetPciInfo");
    NEED_INIT();
    NEED_DEV(device, g);
    if (!pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof *pci);
    fill_pci(g, &pci->domain, &pci->bus, &pci->device, &pci->pciDeviceId, &pci->pciSubSystemId);
    snprintf(pci->busId, sizeof pci->busId, "%04X:%02X:%02X.0", pci->domain, pci->bus, pci->device);
    return NVML_SUCCESS;
}

static void mem_numbers(int g, unsigned long long *total, unsigned long long *used)
{
    *total = (unsigned long long)lab_intf("gpu.%d.memory_total_mib", g, 0, 0) * MIB;
    *used = (unsigned long long)lab_intf("gpu.%d.memory_used_mib", g, 0, 0) * MIB;
    if (*used > *total)
        *used = *total;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    LAB_FAULT2("nvmlDeviceGetMemoryInfo", NULL);
    NEED_INIT();
    NEED_DEV(device, g);
    if (!memory)
        return NVML_ERROR_INVALID_ARGUMENT;
    mem_numbers(g, &memory->total, &memory->used);
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    LAB_FAULT("nvmlDeviceGetMemoryInfo_v2");
    NEED_INIT();
    NEED_DEV(device, g);
    if (!memory)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != nvmlMemory_v2)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    mem_numbers(g, &memory->total, &memory->used);
    memory->reserved = 0;
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
    LAB_FAULT("nvmlDeviceGetUtilizationRates");
    NEED_INIT();
    NEED_DEV(device, g);
    if (!utilization)
        return NVML_ERROR_INVALID_ARGUMENT;
    utilization->gpu = (unsigned)lab_intf("gpu.%d.utilization_gpu", g, 0, 0);
    utilization->memory = (unsigned)lab_intf("gpu.%d.utilization_memory", g, 0, 0);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    LAB_FAULT("nvmlDeviceGetCudaComputeCapability");
    NEED_INIT();
    NEED_DEV(device, g);
    if (!major || !minor)
        return NVML_ERROR_INVALID_ARGUMENT;
    *major = (int)lab_intf("gpu.%d.cc_major", g, 0, 0);
    *minor = (int)lab_intf("gpu.%d.cc_minor", g, 0, 0);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode)
{
    LAB_FAULT("nvmlDeviceGetMigMode");
    NEED_INIT();
    NEED_DEV(device, g);
    if (!currentMode || !pendingMode)
        return NVML_ERROR_INVALID_ARGUMENT;
    long long m = lab_intf("gpu.%d.mig_mode", g, 0, -1);
    if (m < 0)
        return NVML_ERROR_NOT_SUPPORTED; /* a GPU without MIG (anything before A100/A30) */
    *currentMode = *pendingMode = (unsigned)m; /* NVML_DEVICE_MIG_DISABLE 0, _ENABLE 1 */
    return NVML_SUCCESS;
}

/* Process lists: infos == NULL or *infoCount too small -> INSUFFICIENT_SIZE with the count. */
static nvmlReturn_t processes(nvmlDevice_t device, unsigned int *infoCount, void *infos, int v1, int graphics)
{
    NEED_INIT();
    NEED_DEV(device, g);
    if (!infoCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned n = graphics ? 0 : (unsigned)lab_intf("gpu.%d.process_count", g, 0, 0);
    if (*infoCount < n || (!infos && n > 0)) {
        *infoCount = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *infoCount = n;
    for (unsigned p = 0; p < n; p++) {
        unsigned pid = (unsigned)lab_intf("gpu.%d.process.%d.pid", g, (int)p, 0);
        unsigned long long used = (unsigned long long)lab_intf("gpu.%d.process.%d.used_mib", g, (int)p, 0) * MIB;
        if (v1) {
            nvmlProcessInfo_v1_t *o = (nvmlProcessInfo_v1_t *)infos + p;
            o->pid = pid;
            o->usedGpuMemory = used;
        } else {
            nvmlProcessInfo_t *o = (nvmlProcessInfo_t *)infos + p;
            o->pid = pid;
            o->usedGpuMemory = used;
            o->gpuInstanceId = NVML_VALUE_NOT_AVAILABLE_UINT;
            o->computeInstanceId = NVML_VALUE_NOT_AVAILABLE_UINT;
        }
    }
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                         nvmlProcessInfo_v1_t *infos)
{
    LAB_FAULT2("nvmlDeviceGetComputeRunningProcesses", NULL);
    return processes(device, infoCount, infos, 1, 0);
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                            nvmlProcessInfo_t *infos)
{
    LAB_FAULT("nvmlDeviceGetComputeRunningProcesses_v2");
    return processes(device, infoCount, infos, 0, 0);
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                            nvmlProcessInfo_t *infos)
{
    LAB_FAULT("nvmlDeviceGetComputeRunningProcesses_v3");
    return processes(device, infoCount, infos, 0, 0);
}

EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                             nvmlProcessInfo_t *infos)
{
    LAB_FAULT("nvmlDeviceGetGraphicsRunningProcesses_v3");
    return processes(device, infoCount, infos, 0, 1);
}
