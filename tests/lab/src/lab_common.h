/*
 * Shared by the gpudoctor lab's stand-ins for libcuda.so.1 and libnvidia-ml.so.1:
 * reading the scenario file and applying its faults.
 *
 * The scenario is a flat text file written by tests/lab/scenario.py; its path comes from
 * the environment variable GPUDOCTOR_LAB_SCENARIO. Its first line is the header
 * "# gpudoctor-lab-scenario 1", then one "key=value" per line (no quoting; the value runs
 * to the end of the line). Lines starting with '#' are comments.
 *
 * Faults, by symbol name S (an exact symbol such as "cuCtxCreate_v2", or its base name
 * without a trailing "_vN", which covers every version: "cuCtxCreate"):
 *   error.S=N   the call returns N (0 means: no override, behave normally)
 *   hang.S=1    the call never returns
 *   crash.S=1   the call raises SIGSEGV
 *   delay.S=MS  the call sleeps MS milliseconds first
 *
 * This is test code: a scenario is trusted input, written by the test suite.
 */
#ifndef GPUDOCTOR_LAB_COMMON_H
#define GPUDOCTOR_LAB_COMMON_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LAB_MAX_KEYS 4096
#define LAB_HEADER "# gpudoctor-lab-scenario 1"

static char *lab_keys[LAB_MAX_KEYS];
static char *lab_vals[LAB_MAX_KEYS];
static int lab_nkeys = 0;
static int lab_loaded = 0; /* 1: a scenario file was read */
static pthread_once_t lab_once = PTHREAD_ONCE_INIT;

static inline void lab_load_file(void)
{
    const char *path = getenv("GPUDOCTOR_LAB_SCENARIO");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[4096];
    int first = 1;
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (first) {
            first = 0;
            if (strcmp(line, LAB_HEADER) != 0) {
                fprintf(stderr, "gpudoctor-lab: %s is not a lab scenario file\n", path);
                break;
            }
            lab_loaded = 1;
            continue;
        }
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *eq = strchr(line, '=');
        if (!eq || lab_nkeys >= LAB_MAX_KEYS)
            continue;
        *eq = '\0';
        lab_keys[lab_nkeys] = strdup(line);
        lab_vals[lab_nkeys] = strdup(eq + 1);
        lab_nkeys++;
    }
    fclose(f);
}

static inline void lab_load(void) { pthread_once(&lab_once, lab_load_file); }

/* Test hook: forget the scenario and read GPUDOCTOR_LAB_SCENARIO again (not thread-safe). */
static inline void lab_reload(void)
{
    lab_load();
    for (int i = 0; i < lab_nkeys; i++) {
        free(lab_keys[i]);
        free(lab_vals[i]);
    }
    lab_nkeys = 0;
    lab_loaded = 0;
    lab_load_file();
}

static inline const char *lab_get(const char *key)
{
    lab_load();
    for (int i = lab_nkeys - 1; i >= 0; i--)
        if (strcmp(lab_keys[i], key) == 0)
            return lab_vals[i];
    return NULL;
}

static inline const char *lab_getf(const char *fmt, int a, int b)
{
    char key[256];
    snprintf(key, sizeof key, fmt, a, b);
    return lab_get(key);
}

static inline long long lab_int(const char *s, long long dflt)
{
    if (!s || !*s)
        return dflt;
    return strtoll(s, NULL, 0);
}

static inline long long lab_intf(const char *fmt, int a, int b, long long dflt)
{
    return lab_int(lab_getf(fmt, a, b), dflt);
}

/* "cuCtxCreate_v2" -> "cuCtxCreate"; names without a "_vN" tail are returned unchanged. */
static inline void lab_base_name(const char *sym, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s", sym);
    char *u = strrchr(out, '_');
    if (u && u[1] == 'v' && u[2] >= '0' && u[2] <= '9') {
        char *p = u + 2;
        while (*p >= '0' && *p <= '9')
            p++;
        if (*p == '\0')
            *u = '\0';
    }
}

static inline const char *lab_fault_key(const char *kind, const char *sym, const char *alias)
{
    char key[256], base[200];
    const char *v;
    snprintf(key, sizeof key, "%s.%s", kind, sym);
    if ((v = lab_get(key)))
        return v;
    lab_base_name(sym, base, sizeof base);
    if (strcmp(base, sym) != 0) {
        snprintf(key, sizeof key, "%s.%s", kind, base);
        if ((v = lab_get(key)))
            return v;
    }
    if (alias) {
        snprintf(key, sizeof key, "%s.%s", kind, alias);
        if ((v = lab_get(key)))
            return v;
    }
    return NULL;
}

/* Apply the scenario's faults for a call; returns the code to return, or -1 to go on. */
static inline int lab_fault(const char *sym, const char *alias)
{
    const char *v;
    if ((v = lab_fault_key("delay", sym, alias))) {
        long long ms = lab_int(v, 0);
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0) {
        }
    }
    if ((v = lab_fault_key("hang", sym, alias)) && lab_int(v, 0)) {
        for (;;)
            pause();
    }
    if ((v = lab_fault_key("crash", sym, alias)) && lab_int(v, 0)) {
        /* A genuine invalid write, like a driver bug, then the signal in case it was caught. */
        volatile int *bad = (volatile int *)(size_t)8;
        raise(SIGSEGV);
        *bad = 1;
    }
    if ((v = lab_fault_key("error", sym, alias))) {
        long long code = lab_int(v, 0);
        if (code != 0)
            return (int)code;
    }
    return -1;
}

#define LAB_FAULT(sym) LAB_FAULT2(sym, NULL)
#define LAB_FAULT2(sym, alias)                                                                   \
    do {                                                                                         \
        int lab_code_ = lab_fault(sym, alias);                                                   \
        if (lab_code_ >= 0)                                                                      \
            return lab_code_;                                                                    \
    } while (0)

/* "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6" -> 16 bytes; returns 0 on success. */
static inline int lab_uuid_bytes(const char *uuid, unsigned char out[16])
{
    const char *p = strchr(uuid, '-');
    int n = 0;
    if (!p)
        return -1;
    p++;
    memset(out, 0, 16);
    while (*p && n < 32) {
        char c = *p++;
        int v;
        if (c == '-')
            continue;
        if (c >= '0' && c <= '9')
            v = c - '0';
        else if (c >= 'a' && c <= 'f')
            v = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v = c - 'A' + 10;
        else
            return -1;
        out[n / 2] = (unsigned char)(out[n / 2] | (n % 2 ? v : v << 4));
        n++;
    }
    return n == 32 ? 0 : -1;
}

#endif
