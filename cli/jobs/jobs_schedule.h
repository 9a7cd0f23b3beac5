/* jobs_schedule.h - `lanes jobs URL schedule | unschedule | schedules`
 * (jobs_schedule.c). */
#ifndef CLI_JOBS_SCHEDULE_H
#define CLI_JOBS_SCHEDULE_H

/* Run `lanes jobs` argv if its command (argv[2], or argv[1] for --help) is
 * one of the three: the exit code; else -1 (not ours). */
int cli_jobs_schedule(int argc, char **argv);

#endif
