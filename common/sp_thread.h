/*
 * sp_thread.h - the one way seedpipe runs threads: a parallel-for over a
 * chunked atomic counter, an ordered multi-step batch pipeline, and a crew
 * of threads kept for a stream of parallel-for jobs.
 *
 * Every threaded code path of the suite (seqidx's build, seedfilt's native
 * and device paths, extend, strsort) runs on these primitives; nothing
 * else in common/ calls pthread_create, except long-lived helper threads
 * that are not work distribution (a gzip producer, an OpenCL open-ahead).
 *
 * Error policy (see util.h): a function that runs on a worker thread never
 * exits the process.  It returns -1 after sp_fail("message"), which records
 * the message in the calling thread's error slot.  sp_for and sp_pipeline
 * stop handing out work after the first failure, wait for every thread, and
 * return -1 with that first message copied into the caller's error slot
 * (sp_errmsg()); later failures are dropped, so an error is reported once.
 *
 * Threads: at most SP_THREADS_MAX; a thread that cannot be created is not an
 * error (the others, the calling thread included, do its share).
 */
#ifndef SP_THREAD_H
#define SP_THREAD_H

#include <stddef.h>

#define SP_THREADS_MAX 1024

/**
 * Work item of sp_for: item I (0 <= I < N) on thread TID (0 <= TID <
 * nthreads; TID indexes per-thread scratch).  Returns 0, or -1 after
 * sp_fail().
 */
typedef int (*sp_for_fn)(void *ctx, size_t i, int tid);

/**
 * Run FN(CTX, i, tid) for every i in 0..N-1 on NTHREADS threads (the caller
 * is thread 0).  Items are handed out CHUNK at a time (0: a chunk size that
 * gives each thread about 16 chunks) from an atomic counter, so the order in
 * which items run is unspecified.  Returns 0, or -1 after the first failure
 * (message in sp_errmsg()); items not yet handed out then do not run.
 */
int sp_for(int nthreads, size_t n, size_t chunk, sp_for_fn fn, void *ctx);

/**
 * One step of a pipeline: STEP (0..nsteps-1) of the batch *DATA.  Step 0
 * creates a batch and stores it in *DATA (its input is NULL); it returns 1
 * at the end of the input (no batch).  Later steps transform *DATA in place
 * or replace it.  Returns 0, 1 (end, step 0 only), or -1 after sp_fail().
 */
typedef int (*sp_step_fn)(void *ctx, int step, void **data);

typedef struct {
	int nsteps;          /* steps per batch, 1..32 */
	int nbatches;        /* batches in flight at most (>= 1): bounds memory */
	sp_step_fn step;
	/* optional: frees a batch abandoned after a failure (DATA non-NULL) */
	void (*drop)(void *ctx, void *data);
	void *ctx;
} sp_pipe;

/**
 * Run batches through the steps, every step in input order: step s of batch
 * i starts only after step s of batch i-1 has ended, so the steps of
 * different batches overlap (read batch i+1 while batch i is worked on and
 * batch i-1 is written) and each step sees the batches in order.  At most
 * P->nbatches batches are in flight.  The steps run on min(nsteps,
 * nbatches) pipeline threads; any of them may run any step of any batch,
 * and a thread that ends an ordered step goes on with the same step of the
 * next batch when it may (a read step reads ahead with no hand-over from
 * thread to thread).  A step may itself call sp_for.
 *
 * Returns 0 when step 0 has reported the end and every batch has left the
 * last step; -1 after the first failure (message in sp_errmsg()): batches
 * not yet at a step do not enter it, and P->drop frees what is left.
 */
int sp_pipeline(const sp_pipe *p);

/**
 * sp_pipeline() with parallel steps: bit s of PARALLEL marks step s
 * (steps 0 and nsteps-1 never are).  A parallel step runs for several
 * batches at once, first come first served, at most WIDTH (0: any) in
 * parallel steps together, so that many small batches stream through it
 * with no barrier at the end of each (a slow batch holds up only the
 * ordered steps after it, not the other threads); the next ordered step
 * still sees the batches in input order.  Its function must be safe to
 * call concurrently.  The steps run on WIDTH + 1 pipeline threads (at most
 * P->nbatches): WIDTH for the parallel steps, one more for the ordered
 * ones.  P->nbatches should then exceed WIDTH, so that the
 * ordered steps have batches to work on while WIDTH are in parallel steps.
 */
int sp_pipeline_par(const sp_pipe *p, unsigned parallel, int width);

/*
 * A crew: threads that run the items of a stream of jobs (each one an
 * sp_for: FN(CTX, i, tid) for i in 0..N-1, CHUNK items at a time), the
 * oldest job's first, with no barrier between jobs: a job's last chunks
 * run beside the next job's first ones.  A pipeline step hands a batch's
 * items to the crew and returns; a later step waits for that job (and
 * helps with its items meanwhile).  The job is the caller's memory, in use
 * from sp_crew_add until sp_crew_wait returns.
 */
typedef struct sp_crew sp_crew;

typedef struct sp_job {
	struct sp_job *next;      /* the crew's list of jobs with items not handed out */
	sp_for_fn fn;
	void *ctx;
	size_t n, chunk, given, left;   /* items handed out; items not yet ended */
	int failed, added;
	char msg[1024];           /* the first failure's message (SP_ERRMSG_MAX) */
} sp_job;

/**
 * A crew of NTHREADS threads (TIDs 0..NTHREADS-1; a thread that cannot be
 * created is not an error: the waiters do its share).
 */
sp_crew *sp_crew_new(int nthreads);

/** Queue job J: FN(CTX, i, tid) for i in 0..N-1, CHUNK (>= 1) items at a time. */
void sp_crew_add(sp_crew *c, sp_job *j, size_t n, size_t chunk, sp_for_fn fn, void *ctx);

/**
 * Wait until every item of J has ended, running J's items not yet handed
 * out on the calling thread as TID (a TID no crew thread and no other
 * waiter uses at the same time).  0, or -1 with J's first failure's
 * message in the caller's error slot.  A job never added: 0.
 */
int sp_crew_wait(sp_crew *c, sp_job *j, int tid);

/** Stop the crew's threads (every job waited for first) and free it. */
void sp_crew_free(sp_crew *c);

#endif
