/*
 * replay.c - main() of the replay build of a fuzz target (fuzz/fuzz.h):
 *
 *   NAME FILE|DIR...
 *
 * runs LLVMFuzzerTestOneInput on each file (each file of a directory) in a
 * child process with a time limit.  A child that exits (any status: a tool
 * rejecting the input exits 1) is fine; one killed by a signal, or still
 * running after the limit ($FUZZ_REPLAY_TIMEOUT seconds, 20), is a failure.
 * Exit status: 0 if every input was fine, 1 otherwise.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"

static int run_one(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0, k;
	const char *env = getenv("FUZZ_REPLAY_TIMEOUT");
	int st;
	pid_t pid;

	if (!f) {
		perror(path);
		return 1;
	}
	do {
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			if (!(buf = realloc(buf, cap)))
				abort();
		}
		k = fread(buf + n, 1, cap - n, f);
		n += k;
	} while (k > 0);
	fclose(f);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		alarm(env ? (unsigned)atoi(env) : 20);
		LLVMFuzzerTestOneInput(buf, n);
		exit(0);
	}
	free(buf);
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	if (WIFSIGNALED(st)) {
		fprintf(stderr, "replay: %s: killed by signal %d%s\n", path, WTERMSIG(st),
			WTERMSIG(st) == SIGALRM ? " (time limit)" : "");
		return 1;
	}
	printf("%s: exit %d\n", path, WEXITSTATUS(st));
	return 0;
}

int main(int argc, char **argv)
{
	int i, bad = 0;

	for (i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			struct dirent **ents;
			int n = scandir(argv[i], &ents, NULL, alphasort), j;

			for (j = 0; j < n; j++) {
				char p[4096];

				if (ents[j]->d_name[0] != '.') {
					snprintf(p, sizeof p, "%s/%s", argv[i], ents[j]->d_name);
					bad |= run_one(p);
				}
				free(ents[j]);
			}
			free(ents);
		} else {
			bad |= run_one(argv[i]);
		}
	}
	return bad;
}
