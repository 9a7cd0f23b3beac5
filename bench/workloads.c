/* workloads.c - anchor of the ln_workloads library; the workload code
 * shared by the bench programs and `lanes bench` lives in bench/workloads/. */
int ln_workloads_anchor;
