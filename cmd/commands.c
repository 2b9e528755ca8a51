/* SPDX-License-Identifier: MIT */
/* The one list of subcommands. */
#include <string.h>

#include "cmd.h"

static const struct ct_cmd commands[] = {
    {"run", cmd_run, "run and verify one collective over a size range (nccl-tests style)",
     "run [--local N] [--coll C] [--algo A] [-b MIN] [-e MAX] [-f F] [-n ITERS] [-w WARMUP] "
     "[-c CHECK] [-o OP] [-d TYPE] [options]"},
    {"probe", cmd_probe, "show the topology of this node: CPUs, PCI, GPUs, NICs, torus",
     "probe [--from KIND FILE] [--sysfs-root DIR] [--json] [--view V]"},
    {"list", cmd_list, "list algorithms, collectives, transports or datatypes",
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
