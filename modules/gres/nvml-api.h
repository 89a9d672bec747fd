/* The part of NVML's C ABI the gres module uses, declared by hand so the
 * module builds without NVIDIA's header and loads libnvidia-ml at run time.
 *
 * Types, constants and signatures follow nvml.h as shipped with the driver
 * (CUDA 11.x and later): the versioned entry points (_v2, _v3) are the ones
 * the current library exports under those exact names.
 */
#pragma once

typedef int nvmlReturn_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_TIMEOUT 10
#define NVML_ERROR_LIBRARY_NOT_FOUND 12
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_UNKNOWN 999

typedef struct nvmlDevice_st *nvmlDevice_t;

/* Buffer sizes nvml.h recommends for the string getters. */
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16

/* NVLink ports per device in the current header (Hopper has 18). */
#define NVML_NVLINK_MAX_LINKS 18

typedef struct nvmlPciInfo_st {
        char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE]; /* "0000:18:00.0" */
        unsigned int domain;
        unsigned int bus;
        unsigned int device;
        unsigned int pciDeviceId;
        unsigned int pciSubSystemId;
        char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE]; /* "00000000:18:00.0" */
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
        unsigned long long total;
        unsigned long long free;
        unsigned long long used;
} nvmlMemory_t;

typedef enum nvmlEnableState_enum {
        NVML_FEATURE_DISABLED = 0,
        NVML_FEATURE_ENABLED = 1,
} nvmlEnableState_t;

/* Multi-node NVLink (GB200-class): the fabric a GPU is registered with.
 * nvmlDeviceGetGpuFabricInfo() is in drivers from R535 on; older ones lack
 * the symbol and Hopper HGX boards answer NOT_SUPPORTED. */
#define NVML_GPU_FABRIC_UUID_LEN 16
#define NVML_GPU_FABRIC_STATE_COMPLETED 3

typedef struct nvmlGpuFabricInfo_st {
        unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
        nvmlReturn_t status; /* of the registration, once state is COMPLETED */
        unsigned int cliqueId;
        unsigned char state;
} nvmlGpuFabricInfo_t;

#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE 1

/* What nvmlDeviceGetAttributes_v2() reports of a MIG device: its GPU
 * instance's share of the GPU, which names its profile ("3g.20gb"). */
typedef struct nvmlDeviceAttributes_st {
        unsigned int multiprocessorCount;
        unsigned int sharedCopyEngineCount;
        unsigned int sharedDecoderCount;
        unsigned int sharedEncoderCount;
        unsigned int sharedJpegCount;
        unsigned int sharedOfaCount;
        unsigned int gpuInstanceSliceCount;
        unsigned int computeInstanceSliceCount;
        unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

/* The signatures, as pointer types for dlsym().  Each NVML_FN(x) names the
 * pointer type x_fn. */
typedef nvmlReturn_t (*nvmlInit_v2_fn)(void);
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef const char *(*nvmlErrorString_fn)(nvmlReturn_t result);
typedef nvmlReturn_t (*nvmlDeviceGetCount_v2_fn)(unsigned int *deviceCount);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int index, nvmlDevice_t *device);
typedef nvmlReturn_t (*nvmlDeviceGetName_fn)(nvmlDevice_t device, char *name, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetUUID_fn)(nvmlDevice_t device, char *uuid, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetPciInfo_v3_fn)(nvmlDevice_t device, nvmlPciInfo_t *pci);
typedef nvmlReturn_t (*nvmlDeviceGetMinorNumber_fn)(nvmlDevice_t device, unsigned int *minorNumber);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_fn)(nvmlDevice_t device, nvmlMemory_t *memory);
/* cpuSetSize counts unsigned longs, not bits. */
typedef nvmlReturn_t (*nvmlDeviceGetCpuAffinity_fn)(nvmlDevice_t device, unsigned int cpuSetSize,
                                                     unsigned long *cpuSet);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkState_fn)(nvmlDevice_t device, unsigned int link,
                                                     nvmlEnableState_t *isActive);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkRemotePciInfo_v2_fn)(nvmlDevice_t device, unsigned int link,
                                                                nvmlPciInfo_t *pci);
typedef nvmlReturn_t (*nvmlDeviceGetGpuFabricInfo_fn)(nvmlDevice_t device, nvmlGpuFabricInfo_t *info);
typedef nvmlReturn_t (*nvmlDeviceGetMigMode_fn)(nvmlDevice_t device, unsigned int *currentMode,
                                                 unsigned int *pendingMode);
typedef nvmlReturn_t (*nvmlDeviceGetMaxMigDeviceCount_fn)(nvmlDevice_t device, unsigned int *count);
typedef nvmlReturn_t (*nvmlDeviceGetMigDeviceHandleByIndex_fn)(nvmlDevice_t device, unsigned int index,
                                                                nvmlDevice_t *migDevice);
typedef nvmlReturn_t (*nvmlDeviceGetGpuInstanceId_fn)(nvmlDevice_t device, unsigned int *id);
typedef nvmlReturn_t (*nvmlDeviceGetComputeInstanceId_fn)(nvmlDevice_t device, unsigned int *id);
typedef nvmlReturn_t (*nvmlDeviceGetAttributes_v2_fn)(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes);
