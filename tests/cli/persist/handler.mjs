// The Node handler of tests/cli/test_worker_persist.sh: the data back, byte for
// byte, with a progress value and a log line. argv[2]: the library's path.
const { run, Raw } = await import(process.argv[2]);

run(async (job) => {
  job.progress({ half: 0.5 });
  job.log(`echo ${job.id}`);
  console.log('a stray console.log goes to stderr');
  if (job.name === 'throw') throw new Error('no good');
  return new Raw(job.dataText);
});
