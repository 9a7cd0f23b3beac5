// piscina-worker.mjs - the task of experiment E1 (docs/experiments.md#e1): value + 1.
export default (value) => value + 1;
