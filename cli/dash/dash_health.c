/* dash_health.c - the store's health for `lanes dash` (dash_health.h). */
#include "dash_health.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

/* One dashboard per process: its store's state, shared by the request
 * threads and the watch thread. */
static atomic_int was_down;            /* the last ask failed */
static _Atomic uint64_t down_since_ms; /* monotonic ms of the first failure */
static atomic_int stopping;
static pthread_t watch_th;
static int watching;

static uint64_t mono_ms(void) {
    return ln_now_ns() / 1000000;
}

unsigned cli_dash_health(cli_dash *d, json_t **body) {
    int paused = 0; /* one cheap read; the queue need not exist */
    int err = ln_jobs_is_paused(d->jobs, "lanes-healthz", &paused);
    uint64_t now = mono_ms();
    if (err != 0) {
        if (atomic_exchange(&was_down, 1) == 0) {
            atomic_store(&down_since_ms, now);
            fprintf(stderr, "lanes dash: the store %s does not answer (%s: %s)\n", d->url_shown,
                    ln_err_name(err), ln_jobs_errmsg(d->jobs));
        }
        *body =
            json_pack("{s:s,s:s,s:s,s:I}", "status", "down", "store", d->store, "error",
                      ln_err_name(err), "down_ms", (json_int_t)(now - atomic_load(&down_since_ms)));
        return 503;
    }
    if (atomic_exchange(&was_down, 0) == 1)
        fprintf(stderr, "lanes dash: the store %s answers again after %llu ms\n", d->url_shown,
                (unsigned long long)(now - atomic_load(&down_since_ms)));
    *body = json_pack("{s:s,s:s}", "status", "up", "store", d->store);
    return 200;
}

static void *watch_main(void *arg) {
    cli_dash *d = arg;
    while (!atomic_load(&stopping)) {
        json_t *body = NULL;
        cli_dash_health(d, &body);
        json_decref(body);
        for (unsigned t = 0; t < CLI_DASH_HEALTH_EVERY_MS && !atomic_load(&stopping); t += 50) {
            struct timespec ts = {0, 50 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

int cli_dash_health_start(cli_dash *d) {
    atomic_store(&stopping, 0);
    watching = pthread_create(&watch_th, NULL, watch_main, d) == 0;
    return watching ? 0 : -1;
}

void cli_dash_health_stop(void) {
    if (!watching) return;
    atomic_store(&stopping, 1);
    pthread_join(watch_th, NULL);
    watching = 0;
}
