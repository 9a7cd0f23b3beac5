/* backoff.c - the retry delay of a failed run: builtin types, jitter and
 * the per-thread random draw (see backoff.h). A leaf: nothing of the
 * jobs layer is called. docs/internals/backoff.md. */
#include "backoff.h"

#include <math.h>
#include <stdint.h>
#include <sys/random.h>
#include <time.h>

int64_t ln__backoff_base(int type, int64_t ms, int made) {
    if (ms <= 0) return 0;
    if (type != LN_BACKOFF_EXPONENTIAL) return ms < LN__BACKOFF_CAP_MS ? ms : LN__BACKOFF_CAP_MS;
    int shift = made < 0 ? 0 : made < 40 ? made : 40;
    return ms > (LN__BACKOFF_CAP_MS >> shift) ? LN__BACKOFF_CAP_MS : ms << shift;
}

int64_t ln__backoff_jittered(int64_t d, double jitter, double r) {
    if (!(jitter > 0) || d <= 0) return d; /* also NaN */
    if (jitter > 1) jitter = 1;
    if (!(r >= 0)) r = 0;
    if (r >= 1) r = nextafter(1.0, 0.0);
    double dd = (double)d, v = floor(r * dd * jitter + dd * (1 - jitter));
    /* d <= the cap < 2^53: exact in a double; rounding may still reach d
     * or a hair below (1 - j) * d, never outside [0, d] once clamped */
    if (v < 0) return 0;
    if (v > dd) return d;
    return (int64_t)v;
}

double ln__backoff_clamp_jitter(double j) {
    if (!(j > 0)) return 0; /* NaN too */
    return j < 1 ? j : 1;
}

int64_t ln__backoff_strategy_delay(int64_t v) {
    if (v == -1) return -1;
    if (v < 0) return 0;
    return v < LN__BACKOFF_CAP_MS ? v : LN__BACKOFF_CAP_MS;
}

/* ------------------------------------------------------------ the draw */

/* xoshiro256** (Blackman and Vigna), one state per thread: a worker's
 * retries are decided on its dispatcher thread, so no state is shared
 * and nothing is locked. */
static _Thread_local uint64_t tl_s[4];
static _Thread_local int tl_seeded;

static uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void seed(void) {
    uint64_t x = 0;
    if (getrandom(&x, sizeof x, GRND_NONBLOCK) != (ssize_t)sizeof x) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        x ^= (uint64_t)(uintptr_t)&tl_seeded; /* differs per thread */
    }
    for (int i = 0; i < 4; i++) tl_s[i] = splitmix(&x);
    tl_seeded = 1;
}

double ln__backoff_random(void) {
    if (!tl_seeded) seed();
    uint64_t *s = tl_s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return (double)(out >> 11) * 0x1.0p-53; /* 53 bits: [0, 1) */
}
