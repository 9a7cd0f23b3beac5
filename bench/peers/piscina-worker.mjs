// piscina-worker.mjs - the task of experiment E1 (seed 000/001): value + 1.
export default (value) => value + 1;
