/* SPDX-License-Identifier: MIT */
/* The NVML loader: library search, symbol table with fallbacks, error mapping. */
#include <errno.h>
#include <stdlib.h>

#include "fake_nvml_client.h"
#include "gpu.h"
#include "nvml_loader.h"

static void test_missing_library(void **state) {
    struct gpu_source *s = (struct gpu_source *)0x1;
    struct nvml_api *api = (struct nvml_api *)0x1;
    const char *reason = NULL;
    struct gpu_source_options opts = {.library_path = "/nonexistent/libnvidia-ml.so.1"};

    ASSERT_ERRNO(gpu_source_open(&opts, &s, &reason), ENOENT);
    assert_non_null(reason);
    assert_non_null(strstr(reason, "does not exist"));
    assert_ptr_equal(s, (struct gpu_source *)0x1); /* untouched on failure */

    reason = NULL;
    ASSERT_ERRNO(nvml_api_open(opts.library_path, &api, &reason), ENOENT);
    assert_non_null(reason);
    assert_ptr_equal(api, (struct nvml_api *)0x1);
}

static void test_not_a_library(void **state) {
    char dir[256], path[512];
    struct gpu_source *s = NULL;
    const char *reason = NULL;

    ASSERT_OK(test_mkdtemp(dir, sizeof(dir)));
    ASSERT_OK(test_write_file(dir, "libnvidia-ml.so.1", "this is not an ELF file\n"));
    (void)snprintf(path, sizeof(path), "%s/libnvidia-ml.so.1", dir);

    struct gpu_source_options opts = {.library_path = path};
    ASSERT_ERRNO(gpu_source_open(&opts, &s, &reason), ELIBBAD);
    assert_non_null(strstr(reason, "cannot be loaded"));
    assert_null(s);
    test_rm_rf(dir);
}

static void test_missing_required_symbol(void **state) {
    struct fake_nvml f;
    struct gpu_source *s = NULL;
    struct nvml_api *api = NULL;
    const char *reason = NULL;

    fake_nvml_open(&f, "no_count");
    f.st->n_devices = 1;
    ASSERT_ERRNO(nvml_api_open(f.path, &api, &reason), ELIBBAD);
    assert_non_null(strstr(reason, "required"));
    assert_null(api);

    struct gpu_source_options opts = {.library_path = f.path};
    ASSERT_ERRNO(gpu_source_open(&opts, &s, &reason), ELIBBAD);
    assert_null(s);
    assert_int_equal(f.st->init_refs, 0); /* never initialised */
    fake_nvml_close(&f);
}

static void test_full_library_resolves_everything(void **state) {
    struct fake_nvml f;
    struct nvml_api *api = NULL;
    const char *reason = NULL;

    fake_nvml_open(&f, "full");
    ASSERT_OK(nvml_api_open(f.path, &api, &reason));
    assert_non_null(api->init);
    assert_non_null(api->shutdown);
    assert_non_null(api->device_get_count);
    assert_non_null(api->device_get_handle_by_index);
    assert_non_null(api->error_string);
    assert_non_null(api->system_get_driver_version);
    assert_non_null(api->device_get_uuid);
    assert_non_null(api->device_get_name);
    assert_non_null(api->device_get_total_energy);
    assert_non_null(api->device_get_power_usage);
    assert_non_null(api->device_get_compute_mode);
    assert_non_null(api->device_get_mig_mode);
    assert_non_null(api->compute_processes_v3);
    assert_non_null(api->compute_processes_v2);
    assert_non_null(api->graphics_processes_v3);
    assert_non_null(api->graphics_processes_v2);
    assert_non_null(api->mps_processes_v3);
    assert_non_null(api->mps_processes_v2);
    assert_non_null(api->process_utilization);
    assert_non_null(api->processes_utilization_info);
    /* The pointers are the library's own functions. */
    assert_ptr_equal((void *)api->device_get_count, dlsym(f.dl, "nvmlDeviceGetCount_v2"));
    assert_ptr_equal((void *)api->compute_processes_v3,
                     dlsym(f.dl, "nvmlDeviceGetComputeRunningProcesses_v3"));
    assert_null(nvml_api_free(api));
    fake_nvml_close(&f);
}

static void test_minimal_library_leaves_optional_null(void **state) {
    struct fake_nvml f;
    struct nvml_api *api = NULL;
    const char *reason = NULL;

    fake_nvml_open(&f, "minimal");
    ASSERT_OK(nvml_api_open(f.path, &api, &reason));
    assert_null(api->device_get_total_energy);
    assert_null(api->compute_processes_v3);
    assert_null(api->graphics_processes_v3);
    assert_null(api->mps_processes_v3);
    assert_null(api->mps_processes_v2);
    assert_null(api->processes_utilization_info);
    assert_non_null(api->compute_processes_v2);
    assert_non_null(api->graphics_processes_v2);
    assert_non_null(api->process_utilization);
    assert_non_null(api->device_get_power_usage);
    nvml_api_free(api);
    fake_nvml_close(&f);
}

static void test_errno_mapping(void **state) {
    static const struct {
        nvmlReturn_t code;
        int err;
    } table[] = {
        {NVML_SUCCESS, 0},
        {NVML_ERROR_UNINITIALIZED, -ENXIO},
        {NVML_ERROR_INVALID_ARGUMENT, -EINVAL},
        {NVML_ERROR_NOT_SUPPORTED, -EOPNOTSUPP},
        {NVML_ERROR_NO_PERMISSION, -EACCES},
        {NVML_ERROR_ALREADY_INITIALIZED, -EALREADY},
        {NVML_ERROR_NOT_FOUND, -ENOENT},
        {NVML_ERROR_INSUFFICIENT_SIZE, -ENOBUFS},
        {NVML_ERROR_INSUFFICIENT_POWER, -EIO},
        {NVML_ERROR_DRIVER_NOT_LOADED, -ENXIO},
        {NVML_ERROR_TIMEOUT, -ETIMEDOUT},
        {NVML_ERROR_IRQ_ISSUE, -EIO},
        {NVML_ERROR_LIBRARY_NOT_FOUND, -ELIBACC},
        {NVML_ERROR_FUNCTION_NOT_FOUND, -ENOSYS},
        {NVML_ERROR_CORRUPTED_INFOROM, -EIO},
        {NVML_ERROR_GPU_IS_LOST, -ENODEV},
        {NVML_ERROR_RESET_REQUIRED, -ENODEV},
        {NVML_ERROR_OPERATING_SYSTEM, -EPERM},
        {NVML_ERROR_LIB_RM_VERSION_MISMATCH, -ELIBBAD},
        {NVML_ERROR_IN_USE, -EBUSY},
        {NVML_ERROR_MEMORY, -ENOMEM},
        {NVML_ERROR_NO_DATA, -ENODATA},
        {NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, -EOPNOTSUPP},
        {NVML_ERROR_INSUFFICIENT_RESOURCES, -ENOSPC},
        {NVML_ERROR_FREQ_NOT_SUPPORTED, -EOPNOTSUPP},
        {NVML_ERROR_ARGUMENT_VERSION_MISMATCH, -EPROTO},
        {NVML_ERROR_DEPRECATED, -EOPNOTSUPP},
        {NVML_ERROR_NOT_READY, -EAGAIN},
        {NVML_ERROR_GPU_NOT_FOUND, -ENODEV},
        {NVML_ERROR_INVALID_STATE, -EBADFD},
        {NVML_ERROR_RESET_TYPE_NOT_SUPPORTED, -EOPNOTSUPP},
        {NVML_ERROR_UNKNOWN, -EIO},
        {(nvmlReturn_t)12345, -EIO},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (nvml_errno(table[i].code) != table[i].err)
            fail_msg("nvml_errno(%d) = %d, expected %d", (int)table[i].code,
                     nvml_errno(table[i].code), table[i].err);
    }
}

static void test_error_text(void **state) {
    struct fake_nvml f;
    struct nvml_api *api = NULL;
    const char *reason = NULL;

    fake_nvml_open(&f, "full");
    ASSERT_OK(nvml_api_open(f.path, &api, &reason));
    assert_string_equal(nvml_error_text(api, NVML_ERROR_GPU_IS_LOST), "GPU is lost");
    f.st->error_string_null = true; /* a library answering NULL is not trusted */
    assert_string_equal(nvml_error_text(api, NVML_ERROR_GPU_IS_LOST), "unknown NVML error");
    assert_string_equal(nvml_error_text(NULL, NVML_ERROR_UNKNOWN), "unknown NVML error");
    nvml_api_free(api);
    assert_null(nvml_api_free(NULL));
    fake_nvml_close(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_library),
        cmocka_unit_test(test_not_a_library),
        cmocka_unit_test(test_missing_required_symbol),
        cmocka_unit_test(test_full_library_resolves_everything),
        cmocka_unit_test(test_minimal_library_leaves_optional_null),
        cmocka_unit_test(test_errno_mapping),
        cmocka_unit_test(test_error_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
