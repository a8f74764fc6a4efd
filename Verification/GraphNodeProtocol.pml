/*
 * The per-node protocol of a TaskGraph run, for SPIN to check every interleaving of.
 * scripts/protocol-check runs it (CI runs that script); docs/ARCHITECTURE.md ("The protocol,
 * checked") says what it proves and what it leaves out.
 *
 * How the model follows the Swift code (Sources/ConductorGraph/):
 * - Every transition of GraphStateMachine runs under the run's one lock (GraphRunStorage's
 *   `state`), so each is one `atomic` block here: blocks under one lock are serialisable, and
 *   everything else a process does (a body, a timer, a backoff sleep) interleaves
 *   between them. The inlines carry the Swift functions' names: takeNext, complete, end,
 *   endQuietly, release (GraphTopology.releaseSuccessors), stop, remove, attemptFailed,
 *   retryStarting, finishIfDone.
 * - A node's phase is GraphNodeTable.Phase: waiting, ready, running, or how it ended (a
 *   node's end is kept there alone, as in the Swift code: ENDED_AS(outcome)).
 * - `running` is GraphWorkers.running, the slots taken: a task takes one when it is handed
 *   to a worker, and gives it back when its worker records its end (complete) — or at once
 *   when a removal ends it during a backoff, in which case complete gives nothing back.
 * - An attempt in a task of its own (a body with a timeout; `AttemptInTask`, kept in the
 *   machine's `attempts` (AttemptsInTasks) by node) is registered/attResult/attGen: its
 *   claim, its settlement by the body (proctype Attempt), by the timer (proctype Timer) or by
 *   abandonment (remove, stop), and the worker's wait for it all run under the run's lock,
 *   so each is an atomic block too. Whichever settles it first wins. The entry stays until
 *   its worker records the attempt (`complete`, `attemptFailed`); attGen is its number, so a
 *   late body or timer of an earlier attempt changes nothing.
 * - Workers: any worker may take any ready task. The real driver starts workers as tasks
 *   become ready (inline, or a helper on its own thread once bodies are long; see
 *   GraphWorkers), parks (through Lock.suspend) while there is nothing to start, and takes
 *   tasks in priority order up to the concurrency limit — all of which only choose among the
 *   interleavings modelled here.
 * - A stop (cancel(), or a required task's failure) cancels the driver's task group: from
 *   then on, a worker's body may end cancelled and a backoff sleep may throw
 *   (`cancelledAll`). A worker's wait for an attempt in a task of its own is not cancellable:
 *   the stop settles every open attempt in the same transition, which the model checks by
 *   letting that wait block until the attempt has settled.
 *
 * Left out:
 * - The hops: a helper's first task, a task of another priority than its worker's (run in a
 *   child task) and a main-actor body each begin after a hop, and ask whether the run still
 *   runs once there (GraphRunStorage.endUnstarted, TaskSpec.callOnMainActor). Here a body
 *   on a worker is the worker's next step after its take, with no such check: the check only
 *   keeps more bodies from beginning after a stop, which (2) does not claim for bodies on
 *   workers (their start is won at the take).
 * - The driver's park and its spawning of workers (a fixed set of workers here), the
 *   concurrency limit, priorities, markers and milestones, a run's additions, and the
 *   one-pass release of a succeeded task's successors (GraphReleasePathTests checks that it
 *   records what the general path records).
 *
 * The graph: A (2 attempts, optional; with -DDETACHED_A its body has a timeout) → B (requires
 * A's success, skipped otherwise) and C (required: its failure stops the run; with
 * -DDETACHED_C it has a timeout). A remover removes one task of its choice, a canceller may
 * cancel the run at any moment, and WORKERS workers (2 or 3) run the tasks.
 *
 * Checked: (1) every node ends exactly once and the run finishes (no invalid end state:
 * nothing waits forever); (2) no attempt wins its start after the run stopped, and no body in
 * a task of its own begins after it; (3) a body that returned (succeeded) in the task's last
 * attempt, on a worker or in a task of its own, is reported succeeded; (4) `remove` returning
 * `prevented` means no body of that task begins afterwards; (5) every slot a task took is
 * given back exactly once (by a removal during its backoff, or else by its worker).
 */

#ifndef WORKERS
#define WORKERS 2
#endif
#define N 3
#define NONE 255

/* GraphStateMachine.Phase */
#define WAITING 0
#define READY 1
#define RUNNING 2
/* an ended node's phase: how it ended (GraphNodeTable.Phase keeps a node's end there alone) */
#define ENDED_AS(outcome) (3 + outcome)
#define HAS_ENDED(n) (phase[n] > RUNNING)

/* TaskOutcome */
#define UNSET 0
#define SUCCEEDED 1
#define FAILED 2
#define TIMEDOUT 3
#define CANCELLED 4
#define SKIPPED 5

/* the settings (TaskSpec) */
bool detachedSpec[N];
byte maxAttempts[N];
bool requiredSpec[N];
byte successor[N];

/* GraphNodeTable.Node and the run */
byte phase[N];
byte remaining[N];
bool blocked[N];
bool backingOff[N];
/* GraphStateMachine.attempts (AttemptsInTasks) holds one for node */
bool registered[N];
bool isRunning = true;
byte ended = 0;
bool finished = false;
bool cancelledAll = false;
/* GraphWorkers.running */
byte running = 0;

/* the AttemptInTask of each node: whether the worker claimed it, its result, its number */
bool attClaimed[N];
byte attResult[N];
byte attGen[N];

/* ghost state, for the properties */
byte endCount[N];
bool stopped = false;
bool prevented[N];
/* removed while its body ran on a worker (Flags.removedWhileRunning): no attempt follows */
bool removedRunning[N];
/* a body returned (succeeded) in the task's latest attempt */
bool returnedOnWorker[N];
/* processes (workers, remover, canceller) that have ended */
byte exited = 0;

inline endQuietly(n, outcome) {
    assert(!HAS_ENDED(n));
    endCount[n]++;
    assert(endCount[n] == 1);
    phase[n] = ENDED_AS(outcome);
    ended++
}

/* GraphStateMachine.stop: pending tasks end cancelled, open attempts are settled as cancelled
 * (abandoned) in the same transition, the driver cancels its group. */
inline stop() {
    if
    :: isRunning ->
        isRunning = false;
        stopped = true;
        i = 0;
        do
        :: i < N ->
            if
            :: phase[i] == WAITING || phase[i] == READY -> endQuietly(i, CANCELLED)
            :: else -> skip
            fi;
            if
            :: registered[i] && attResult[i] == UNSET -> attResult[i] = CANCELLED
            :: else -> skip
            fi;
            i++
        :: else -> break
        od
    :: else -> skip
    fi
}

/* GraphStateMachine.end: ends `n`, stops the run for a required task's failure, or releases
 * its successor (a chain: each node has at most one), skipping blocked ones. */
inline end(n, outcome) {
    endQuietly(n, outcome);
    if
    :: requiredSpec[n] && isRunning && (outcome == FAILED || outcome == TIMEDOUT) -> stop()
    :: else ->
        cur = n;
        out = outcome;
        do
        :: successor[cur] == NONE -> break
        :: else ->
            s = successor[cur];
            if
            :: phase[s] == WAITING ->
                if
                :: out != SUCCEEDED -> blocked[s] = true
                :: else -> skip
                fi;
                remaining[s]--;
                if
                :: remaining[s] == 0 && isRunning && blocked[s] ->
                    endQuietly(s, SKIPPED);
                    cur = s;
                    out = SKIPPED
                :: remaining[s] == 0 && isRunning && !blocked[s] -> phase[s] = READY; break
                :: else -> break
                fi
            :: else -> break
            fi
        od
    fi
}

/* Also forgets the transition's scratch variables, so states that differ only in them are
 * one state to the search. */
inline finishIfDone() {
    if
    :: ended == N -> finished = true
    :: else -> skip
    fi;
    i = 0;
    cur = 0;
    out = 0;
    s = 0
}

/* Attempt `gen` of `n`'s body, in a task of its own once the worker claimed the attempt. The
 * task first asks whether the attempt is still open (attemptIsOpen), and begins the body only
 * then; the body settles the attempt once it returns, unless the timer or abandonment did
 * first. A settlement for an attempt already replaced (attGen moved on) goes nowhere. */
proctype Attempt(byte n; byte gen) {
    bool open;
    atomic {
        open = attGen[n] == gen && attResult[n] == UNSET;
        if
        /* (2) and (4): a body begins only in an open attempt, never after a stop or a removal
         * that prevented it */
        :: open -> assert(!stopped && !prevented[n])
        :: else -> skip
        fi
    };
    if
    :: open ->
        atomic {
            if
            :: attGen[n] == gen && attResult[n] == UNSET ->
                if
                :: attResult[n] = SUCCEEDED; returnedOnWorker[n] = true
                :: attResult[n] = FAILED
                :: cancelledAll -> attResult[n] = CANCELLED
                fi
            :: else -> skip
            fi
        }
    :: else -> skip
    fi
}

/* The run's DeadlineTimer for attempt `gen` of `n`: it settles the attempt as timed out
 * unless something settled it first. */
proctype Timer(byte n; byte gen) {
    atomic {
        if
        :: attGen[n] == gen && attResult[n] == UNSET -> attResult[n] = TIMEDOUT
        :: else -> skip
        fi
    }
}

proctype Worker() {
    byte n, att, outcome, cur, out, s, i;
    bool ok;
take:
    /* takeNext (in complete, or the driver's nextForDriver), under the run's lock */
    atomic {
        if
        :: finished -> goto done
        :: isRunning && phase[0] == READY -> n = 0
        :: isRunning && phase[1] == READY -> n = 1
        :: isRunning && phase[2] == READY -> n = 2
        fi;
        /* (2) the start is won under the lock, only while running */
        assert(!stopped);
        phase[n] = RUNNING;
        running++;
        if
        :: detachedSpec[n] ->
            registered[n] = true;
            attGen[n]++;
            attClaimed[n] = false;
            attResult[n] = UNSET
        :: else -> skip
        fi
    };
    att = 1;
attempt:
    if
    :: detachedSpec[n] ->
        /* runAttemptBody: claimAttempt, unless the attempt settled (abandoned) first */
        atomic {
            if
            :: registered[n] && attResult[n] == UNSET && !attClaimed[n] -> attClaimed[n] = true; ok = true
            :: else -> ok = false
            fi
        };
        if
        :: ok ->
            /* the body's task, then the timeout, which is scheduled once the task exists */
            run Attempt(n, attGen[n]);
            run Timer(n, attGen[n])
        :: else -> skip
        fi;
        /* awaitAttempt, not cancellable: it waits until the attempt has settled, then
         * attemptResult reads the outcome */
        atomic {
            (attResult[n] != UNSET);
            outcome = attResult[n]
        }
    :: else ->
        /* The body, on this worker: one step, since nothing it does touches the run. */
        atomic {
            assert(!prevented[n]);
            if
            :: outcome = SUCCEEDED
            :: outcome = FAILED
            :: cancelledAll -> outcome = CANCELLED
            fi;
            /* a failure while cancelled is reported cancelled (outcome(of:)) */
            if
            :: outcome == FAILED && cancelledAll -> outcome = CANCELLED
            :: else -> skip
            fi;
            /* (3) is about bodies that returned: a throw is not one */
            returnedOnWorker[n] = outcome == SUCCEEDED
        }
    fi;
    /* execute: retry a failure or a timeout while attempts remain and nothing cancelled */
    if
    :: (outcome == FAILED || outcome == TIMEDOUT) && cancelledAll -> outcome = CANCELLED
    :: (outcome == FAILED || outcome == TIMEDOUT) && !cancelledAll && att < maxAttempts[n] ->
        atomic {
            /* attemptFailed: no retry once the run stopped or a removal ended the task; a task
             * removed while its body ran ends here */
            registered[n] = false;
            returnedOnWorker[n] = false;
            if
            :: isRunning && phase[n] == RUNNING && !removedRunning[n] -> backingOff[n] = true; ok = true
            :: isRunning && phase[n] == RUNNING && removedRunning[n] ->
                end(n, CANCELLED);
                finishIfDone();
                ok = false
            :: else -> ok = false
            fi
        };
        if
        :: !ok -> outcome = CANCELLED; goto complete
        :: else -> skip
        fi;
        /* the backoff's sleep throws once the group is cancelled */
        if
        :: cancelledAll -> outcome = CANCELLED; goto complete
        :: skip
        fi;
        att++;
        atomic {
            /* retryStarting: the one place a retry wins the right to start */
            if
            :: isRunning && phase[n] == RUNNING ->
                assert(!stopped && !prevented[n] && !removedRunning[n]);
                backingOff[n] = false;
                ok = true;
                if
                :: detachedSpec[n] ->
                    registered[n] = true;
                    attGen[n]++;
                    attClaimed[n] = false;
                    attResult[n] = UNSET
                :: else -> skip
                fi
            :: else -> ok = false
            fi
        };
        if
        :: ok -> goto attempt
        :: else -> outcome = CANCELLED
        fi
    :: else -> skip
    fi;
complete:
    atomic {
        /* complete: ends the node unless a removal during the backoff already has, and
         * gives the slot back unless that removal did */
        registered[n] = false;
        if
        :: HAS_ENDED(n) && backingOff[n] -> skip
        :: else -> assert(running > 0); running--
        fi;
        if
        :: !HAS_ENDED(n) -> end(n, outcome)
        :: else -> skip
        fi;
        finishIfDone()
    };
    atomic {
        n = 0;
        att = 0;
        outcome = 0;
        ok = false
    };
    goto take;
done:
    exited++
}

proctype Remover() {
    byte r, cur, out, s, i;
#ifdef REMOVE
    r = REMOVE;
#else
    if
    :: r = 0
    :: r = 1
    :: r = 2
    fi;
#endif
    atomic {
        /* remove */
        if
        :: HAS_ENDED(r) -> skip
        /* abandoned: settled as cancelled; the worker records it */
        :: phase[r] == RUNNING && registered[r] && attResult[r] == UNSET -> attResult[r] = CANCELLED
        /* a failed attempt its worker has not recorded, with attempts left: the retry is
         * prevented (mayRetry) */
        :: phase[r] == RUNNING && registered[r] && (attResult[r] == FAILED || attResult[r] == TIMEDOUT) &&
           attGen[r] < maxAttempts[r] ->
            end(r, CANCELLED);
            prevented[r] = true
        /* settled otherwise: the task has ended, as its worker will record */
        :: phase[r] == RUNNING && registered[r] && attResult[r] != UNSET &&
           !((attResult[r] == FAILED || attResult[r] == TIMEDOUT) && attGen[r] < maxAttempts[r]) -> skip
        /* during a backoff: its slot goes back now */
        :: phase[r] == RUNNING && !registered[r] && backingOff[r] ->
            assert(running > 0);
            running--;
            end(r, CANCELLED);
            prevented[r] = true
        /* stillRunning: the body ends as it will; no attempt follows it */
        :: phase[r] == RUNNING && !registered[r] && !backingOff[r] -> removedRunning[r] = true
        :: phase[r] == WAITING || phase[r] == READY ->
            end(r, CANCELLED);
            prevented[r] = true
        fi;
        finishIfDone()
    };
    exited++
}

proctype Canceller() {
    byte i;
    if
    :: atomic {
           stop();
           if
           :: ended == N -> finished = true
           :: else -> skip
           fi;
           i = 0
       };
        /* storage.cancel(): the driver's task is cancelled, and with it every worker */
        cancelledAll = true
    :: skip
    fi;
    exited++
}

/* The driver: after a stop, cancels its task group (driverMustCancelAll). */
proctype Driver() {
endWaitingForAStop:
    if
    :: stopped -> cancelledAll = true
    fi
}

init {
    byte w;
    maxAttempts[0] = 2;
    maxAttempts[1] = 1;
    maxAttempts[2] = 1;
    requiredSpec[2] = true;
    successor[0] = 1;
    successor[1] = NONE;
    successor[2] = NONE;
#ifdef DETACHED_A
    detachedSpec[0] = true;
#endif
#ifdef DETACHED_C
    detachedSpec[2] = true;
#endif
    remaining[1] = 1;
    atomic {
        /* insert: roots are ready */
        phase[0] = READY;
        phase[1] = WAITING;
        phase[2] = READY;
        w = 0;
        do
        :: w < WORKERS -> run Worker(); w++
        :: else -> break
        od;
        run Remover();
        run Canceller();
        run Driver()
    };
    /* The workers, the remover and the canceller have ended (the driver waits for a stop that
     * may never come; a timer or an abandoned body may still run). */
    (exited == WORKERS + 2);
    assert(finished);
    /* (1) */
    assert(endCount[0] == 1 && endCount[1] == 1 && endCount[2] == 1);
    /* (5) every slot taken was given back exactly once */
    assert(running == 0);
    /* (3) a body that returned on a worker in the task's last attempt is reported succeeded */
    w = 0;
    do
    :: w < N ->
        assert(!returnedOnWorker[w] || phase[w] == ENDED_AS(SUCCEEDED));
        w++
    :: else -> break
    od
}
