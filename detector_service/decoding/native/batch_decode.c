/* A batch of JPEGs decoded by nvImageCodec in one call from Python, with no Python per image.
 *
 * nvImageCodec's Python binding makes a CodeStream and an Image object per image and its caller reads
 * each one's size and pointer back: on the H200 that kept the GPU owner's decoding thread busy about
 * 0.08 ms a frame against 0.04 for the decoding itself. Here the whole batch crosses once: the JPEGs
 * lie where the caller's buffers hold them (addresses and lengths), the decoded RGB images go to given places in one device
 * buffer, and the sizes and a status per image come back in arrays. The caller (native_decoder.py)
 * loads libnvimgcodec first, so its symbols resolve here; nothing else is linked.
 */
#include <stddef.h> /* nvimgcodec.h uses ptrdiff_t without it */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvimgcodec.h"

/* Per image, what became of it (the caller turns each into a DecodeError naming the frame). */
enum { FS_OK = 0, FS_NOT_AN_IMAGE = 1, FS_SIZE_DIFFERS = 2, FS_DECODE_FAILED = 3 };

typedef struct {
    nvimgcodecInstance_t instance;
    nvimgcodecDecoder_t decoder;
    int capacity; /* code streams and images kept, reused from batch to batch */
    nvimgcodecCodeStream_t* streams;
    nvimgcodecImage_t* images;
    nvimgcodecCodeStream_t* batch_streams; /* the good ones of a batch, in order */
    nvimgcodecImage_t* batch_images;
    int* batch_index;
    nvimgcodecProcessingStatus_t* statuses;
} fs_decoder;

static void say(char* error, size_t size, const char* what, nvimgcodecStatus_t status) {
    snprintf(error, size, "%s failed with nvImageCodec status %d", what, (int)status);
}

static int grow(fs_decoder* d, int n) {
    if (n <= d->capacity) return 0;
    void* parts[] = {
        realloc(d->streams, n * sizeof(*d->streams)), realloc(d->images, n * sizeof(*d->images)),
        realloc(d->batch_streams, n * sizeof(*d->batch_streams)),
        realloc(d->batch_images, n * sizeof(*d->batch_images)), realloc(d->batch_index, n * sizeof(int)),
        realloc(d->statuses, n * sizeof(*d->statuses))};
    d->streams = parts[0];
    d->images = parts[1];
    d->batch_streams = parts[2];
    d->batch_images = parts[3];
    d->batch_index = parts[4];
    d->statuses = parts[5];
    for (int i = 0; i < 6; ++i)
        if (parts[i] == NULL) return -1;
    for (int i = d->capacity; i < n; ++i) {
        d->streams[i] = NULL;
        d->images[i] = NULL;
    }
    d->capacity = n;
    return 0;
}

void fs_close(fs_decoder* d) {
    if (d == NULL) return;
    for (int i = 0; i < d->capacity; ++i) {
        if (d->images[i]) nvimgcodecImageDestroy(d->images[i]);
        if (d->streams[i]) nvimgcodecCodeStreamDestroy(d->streams[i]);
    }
    if (d->decoder) nvimgcodecDecoderDestroy(d->decoder);
    if (d->instance) nvimgcodecInstanceDestroy(d->instance);
    free(d->streams);
    free(d->images);
    free(d->batch_streams);
    free(d->batch_images);
    free(d->batch_index);
    free(d->statuses);
    free(d);
}

/* A decoder on ``device_id`` allowed the backend kinds in ``kinds`` (nvimgcodecBackendKind_t values, in
 * order of preference; none: every backend), with ``cpu_threads`` host threads (0: one per core). */
fs_decoder* fs_open(int device_id, const char* extensions, const int* kinds, int num_kinds, int cpu_threads,
                    char* error, size_t error_size) {
    fs_decoder* d = calloc(1, sizeof(fs_decoder));
    if (d == NULL) {
        snprintf(error, error_size, "out of host memory");
        return NULL;
    }
    nvimgcodecInstanceCreateInfo_t create = {.struct_type = NVIMGCODEC_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .struct_size = sizeof(nvimgcodecInstanceCreateInfo_t)};
    create.load_builtin_modules = 1;
    create.load_extension_modules = 1;
    create.extension_modules_path = extensions;
    nvimgcodecStatus_t status = nvimgcodecInstanceCreate(&d->instance, &create);
    if (status != NVIMGCODEC_STATUS_SUCCESS) {
        say(error, error_size, "creating the nvImageCodec instance", status);
        fs_close(d);
        return NULL;
    }
    nvimgcodecBackend_t backends[8];
    if (num_kinds > 8) num_kinds = 8;
    for (int i = 0; i < num_kinds; ++i) {
        memset(&backends[i], 0, sizeof(backends[i]));
        backends[i].struct_type = NVIMGCODEC_STRUCTURE_TYPE_BACKEND;
        backends[i].struct_size = sizeof(nvimgcodecBackend_t);
        backends[i].kind = (nvimgcodecBackendKind_t)kinds[i];
        backends[i].params.struct_type = NVIMGCODEC_STRUCTURE_TYPE_BACKEND_PARAMS;
        backends[i].params.struct_size = sizeof(nvimgcodecBackendParams_t);
        backends[i].params.load_hint = 1.0f;
        backends[i].params.load_hint_policy = NVIMGCODEC_LOAD_HINT_POLICY_FIXED;
    }
    nvimgcodecExecutionParams_t params = {.struct_type = NVIMGCODEC_STRUCTURE_TYPE_EXECUTION_PARAMS, .struct_size = sizeof(nvimgcodecExecutionParams_t)};
    params.device_id = device_id;
    params.max_num_cpu_threads = cpu_threads;
    params.num_backends = num_kinds;
    params.backends = num_kinds ? backends : NULL;
    status = nvimgcodecDecoderCreate(d->instance, &d->decoder, &params, NULL);
    if (status != NVIMGCODEC_STATUS_SUCCESS) {
        say(error, error_size, "creating the decoder", status);
        fs_close(d);
        return NULL;
    }
    return d;
}

/* Decode ``n`` JPEGs lying at host address ``addresses[i]`` (``lengths[i]`` bytes) into interleaved RGB at
 * ``device + places[i]``, each as large as its message said (``widths[i]`` x ``heights[i]``): an image
 * of another size is not decoded (FS_SIZE_DIFFERS), nor is one that is not a 3-channel-capable image.
 * ``result[i]`` says what became of each; ``seen`` gets each image's width and height as parsed (0, 0
 * where it did not parse). The images are complete on ``cuda_stream`` when this returns 0; -1 means
 * the whole call failed (``error`` says why). */
int fs_decode(fs_decoder* d, int n, const int64_t* addresses, const int64_t* lengths,
              uint8_t* device, const int64_t* places, const int32_t* widths, const int32_t* heights,
              void* cuda_stream, int32_t* result, int32_t* seen, char* error, size_t error_size) {
    if (grow(d, n) != 0) {
        snprintf(error, error_size, "out of host memory for a batch of %d", n);
        return -1;
    }
    int good = 0;
    for (int i = 0; i < n; ++i) {
        seen[2 * i] = seen[2 * i + 1] = 0;
        result[i] = FS_NOT_AN_IMAGE;
        const unsigned char* jpeg = (const unsigned char*)(uintptr_t)addresses[i];
        if (nvimgcodecCodeStreamCreateFromHostMem(d->instance, &d->streams[i], jpeg, (size_t)lengths[i], NULL) !=
            NVIMGCODEC_STATUS_SUCCESS)
            continue;
        nvimgcodecImageInfo_t info = {.struct_type = NVIMGCODEC_STRUCTURE_TYPE_IMAGE_INFO, .struct_size = sizeof(nvimgcodecImageInfo_t)};
        if (nvimgcodecCodeStreamGetImageInfo(d->streams[i], &info) != NVIMGCODEC_STATUS_SUCCESS ||
            info.num_planes < 1)
            continue;
        /* As displayed: EXIF orientation applied (as OpenCV's IMREAD_COLOR does on the CPU path). */
        const int turned = info.orientation.rotated == 90 || info.orientation.rotated == 270;
        seen[2 * i] = (int32_t)(turned ? info.plane_info[0].height : info.plane_info[0].width);
        seen[2 * i + 1] = (int32_t)(turned ? info.plane_info[0].width : info.plane_info[0].height);
        if (seen[2 * i] != widths[i] || seen[2 * i + 1] != heights[i]) {
            result[i] = FS_SIZE_DIFFERS;
            continue;
        }
        nvimgcodecImageInfo_t out = {.struct_type = NVIMGCODEC_STRUCTURE_TYPE_IMAGE_INFO, .struct_size = sizeof(nvimgcodecImageInfo_t)};
        out.color_spec = NVIMGCODEC_COLORSPEC_SRGB;
        out.chroma_subsampling = NVIMGCODEC_SAMPLING_NONE;
        out.sample_format = NVIMGCODEC_SAMPLEFORMAT_I_RGB;
        out.num_planes = 1;
        out.plane_info[0].struct_type = NVIMGCODEC_STRUCTURE_TYPE_IMAGE_PLANE_INFO;
        out.plane_info[0].struct_size = sizeof(nvimgcodecImagePlaneInfo_t);
        out.plane_info[0].width = (uint32_t)widths[i];
        out.plane_info[0].height = (uint32_t)heights[i];
        out.plane_info[0].row_stride = (size_t)widths[i] * 3;
        out.plane_info[0].num_channels = 3;
        out.plane_info[0].sample_type = NVIMGCODEC_SAMPLE_DATA_TYPE_UINT8;
        out.buffer = device + places[i];
        out.buffer_kind = NVIMGCODEC_IMAGE_BUFFER_KIND_STRIDED_DEVICE;
        out.cuda_stream = (cudaStream_t)cuda_stream;
        if (nvimgcodecImageCreate(d->instance, &d->images[i], &out) != NVIMGCODEC_STATUS_SUCCESS) {
            result[i] = FS_DECODE_FAILED;
            continue;
        }
        d->batch_streams[good] = d->streams[i];
        d->batch_images[good] = d->images[i];
        d->batch_index[good++] = i;
    }
    if (good == 0) return 0;
    nvimgcodecDecodeParams_t params = {.struct_type = NVIMGCODEC_STRUCTURE_TYPE_DECODE_PARAMS, .struct_size = sizeof(nvimgcodecDecodeParams_t)};
    params.apply_exif_orientation = 1;
    nvimgcodecFuture_t future = NULL;
    nvimgcodecStatus_t status =
        nvimgcodecDecoderDecode(d->decoder, d->batch_streams, d->batch_images, good, &params, &future);
    if (status != NVIMGCODEC_STATUS_SUCCESS) {
        say(error, error_size, "decoding the batch", status);
        if (future) nvimgcodecFutureDestroy(future);
        return -1;
    }
    nvimgcodecFutureWaitForAll(future);
    size_t count = (size_t)good;
    status = nvimgcodecFutureGetProcessingStatus(future, d->statuses, &count);
    nvimgcodecFutureDestroy(future);
    if (status != NVIMGCODEC_STATUS_SUCCESS) {
        say(error, error_size, "reading the batch's statuses", status);
        return -1;
    }
    for (int k = 0; k < good; ++k)
        result[d->batch_index[k]] =
            (k < (int)count && d->statuses[k] == NVIMGCODEC_PROCESSING_STATUS_SUCCESS) ? FS_OK : FS_DECODE_FAILED;
    return 0;
}
