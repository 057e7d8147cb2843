/**
 * How much due scheduled work (source syncs, sends) one scheduler round takes, and how much of it one organization
 * may be. Due work is taken oldest first; without a share per organization, one whose thousands of schedules came
 * due together would fill every round, and another organization's schedule, due a moment later, would wait behind
 * all of them.
 */
export const DUE_PER_ROUND = 100;
export const DUE_PER_ORGANIZATION = 10;
