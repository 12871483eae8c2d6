/* seqio.c - fuzz target: FASTA/FASTQ as it comes, plain or gzip (seqio_common.h). */
#include "seqio_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	run_reader(data + 1, size - 1, data[0]);
	return 0;
}
