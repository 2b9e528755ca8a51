/* SPDX-License-Identifier: MIT */
/* The one list of subcommands. */
#include <string.h>

#include "cmd.h"

/* declared here until cmd/cmd.h carries it */

static const struct ct_cmd commands[] = {
    {"run", cmd_run, "run and verify one collective over a size range (nccl-tests style)",
     "run [--local N] [--coll C] [--algo A] [-b MIN] [-e MAX] [-f F] [-n ITERS] [-w WARMUP] "
     "[-c CHECK] [-o OP] [-d TYPE] [options]"},
    {"sweep", cmd_sweep, "tune: time every algorithm and parameter across sizes, write a config",
     "sweep [--local N] [--coll LIST] [--algos LIST] [-b MIN] [-e MAX] [-f F] [--budget SEC] "
     "[--target-ci X] [--out DIR] [--verify CONFIG] [options]"},
    {"show", cmd_show, "print a tuned config as a crossover table", "show CONFIG"},
    {"join", cmd_join, "join several sweeps' configs (one shape each) into one config",
     "join CONFIG CONFIG... --out FILE"},
    {"export", cmd_export, "write a tuned config in the format a library or launcher reads",
     "export CONFIG --format F [--out FILE] [--for LIB] [--push URL] [--push-metrics URL] "
     "[options]"},
    {"probe", cmd_probe, "show the topology of this node: CPUs, PCI, GPUs, NICs, torus",
     "probe [--from KIND FILE] [--sysfs-root DIR] [--json] [--view V]"},
    {"validate", cmd_validate,
     "check a job's hardware: expected vs measured bandwidth, name the slow host, NIC or link",
     "validate [--local N] [--min-pct P] [--link-gbps G] [--baseline FILE] [--save-baseline FILE] "
     "[--json FILE] [options]"},
    {"top", cmd_top, "live NIC utilization of this host (or one sample as text or JSON)",
     "top [--interval MS] [--sysfs-root DIR] [--once] [--json] [--frames N] [--replay FILE] "
     "[--view NAME]"},
    {"model", cmd_model,
     "predict every algorithm's time on a topology model (clusters of any size), calibrate it",
     "model [--topology FILE | --node PRESET [--nodes N] [--net SPEC]] [--coll C] "
     "[--algo A | --algos LIST] [-b MIN] [-e MAX] [-f F] [--json FILE] | --calibrate RESULTS"},
    {"list", cmd_list, "list algorithms, collectives, transports, datatypes or ops",
     "list algos|colls|transports|datatypes|ops [--verbose]"},
    {"help", cmd_help, "show help for colltune or one subcommand", "help [SUBCOMMAND]"},
};

const struct ct_cmd *ct_cmd_at(int i)
{
    return i >= 0 && (size_t)i < sizeof commands / sizeof commands[0] ? &commands[i] : NULL;
}

const struct ct_cmd *ct_cmd_find(const char *name)
{
    for (int i = 0; ct_cmd_at(i); i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}
