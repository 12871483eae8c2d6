/*
 * seedfilt_mem.h - the command line of seedfilt -m mem (tools/seedfilt_mem.c,
 * linked into seedfilt; the run is common/mem_run.c).
 */
#ifndef SP_SEEDFILT_MEM_H
#define SP_SEEDFILT_MEM_H

/** 1 when ARGV asks for -m mem (seedfilt then hands over to mem_main). */
int mem_wanted(int argc, char **argv);

/** seedfilt -m mem: parses ARGV, runs; returns the exit status. */
int mem_main(int argc, char **argv);

#endif
