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
 * - A node's phase is GraphNodeTable.Phase: waiting, admitting, ready, running, or how it ended (a
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
 * - Removing a task whose body runs on a worker (`stillRunning`) cancels that worker's task
 *   (cancelledBody: the body may then end cancelled), and `complete` ends the task cancelled
 *   whatever its body returned.
 * - A body on its worker under a deadline (a timeout, one attempt: GraphDeadlines) is let go
 *   at once by its deadline (proctype Deadline, the run's timer: the task ends timed out), by a
 *   removal (`abandoned`) or by a stop (both cancelled): the task ends in that transition, its
 *   slot goes back there, its worker's task is cancelled, and when the body returns its
 *   worker records nothing (Flags.abandonedOnWorker, `completeEnded`).
 * - With -DLIMIT, one TaskLimit of capacity 1 is named by A and C, and another run
 *   (OtherRun) takes a place and gives it back. Its lock and the run's are never held
 *   together: requestPermit, limitGrant, limitCancel and limitRelease are atomic blocks of
 *   their own (the limit's lock), `admit` one under the run's lock, and the grant between
 *   them is in flight (`g`), carried by the thread that released or requested. A node whose
 *   dependencies are met is ADMITTING and requests its place; admit makes it READY holding
 *   its place only if it is still admitting and the run runs and is not paused, and gives the
 *   grant back otherwise. Removal and stop cancel an admitting node's request
 *   (removedFromQueue, or nothing when the grant is in flight or the request has not
 *   arrived yet: admit then gives that grant back). A task gives its place back when it ends
 *   — or, if its body in a task of its own was abandoned and has not returned, when that
 *   body returns (`lingering`, storage.bodyReturned); a retry of such a task waits for that
 *   body first. Each thread performs the effects of its transitions after them, in order.
 * - With -DPAUSE, a Pauser pauses (takeNext and retryStarting refuse; a retry waits for
 *   resume) and later resumes; a stop clears the pause. With LIMIT too, pause withdraws the
 *   run's requests and gives back the places of tasks not yet started (ADMITTING again), and
 *   resume requests them again; a task that becomes ready while paused waits withdrawn.
 *
 * Left out:
 * - The hops: a helper's first task, a task of another priority than its worker's (run in a
 *   child task) and a main-actor body each begin after a hop, and ask whether the run still
 *   runs once there (GraphRunStorage.endUnstarted, TaskSpec.callOnMainActor). Here a body
 *   on a worker is the worker's next step after its take, with no such check: the check only
 *   keeps more bodies from beginning after a stop, which (2) does not claim for bodies on
 *   workers (their start is won at the take).
 * - The driver's park and its spawning of workers (a fixed set of workers here), the
 *   concurrency limit, priorities, markers and milestones (joins and `value(of:)` are markers
 *   and waiters), a run's additions, and the one-pass release of a succeeded task's
 *   successors (GraphReleasePathTests checks that it records what the general path records).
 * - Of limits: priorities across runs (one FIFO queue), a task naming several limits (one
 *   here, so no order of acquisition and no partly held set), tickets (a request is known by
 *   its node: admit counts any grant that finds its node admitting, and a stale one then
 *   finds it ready and is given back), capacities above 1, and the other run's own protocol
 *   (its grant reaches it at once; its body is counted from its grant to its release, a
 *   window no shorter than the body's). A worker's body is one step: it is counted (6) from
 *   its take (or its retry's start) to its return.
 * - To keep the search small, -DNO_CANCEL leaves the canceller out and -DOTHER_FIRST has the
 *   other run hold the place when this run starts (scripts/protocol-check says which
 *   configuration uses them; the stop is checked with the limit in `-DLIMIT -DREMOVE=0`); a
 *   pause happens once.
 *
 * The graph: A (2 attempts, optional; with -DDETACHED_A its body has a timeout) → B (requires
 * A's success, skipped otherwise) and C (required: its failure stops the run; with
 * -DDETACHED_C its body runs in a task of its own, as a launcher task's or a timed one with
 * limits does; with -DDEADLINE_C it has a timeout and runs on its worker under a deadline). A remover removes one task of its choice, a canceller may
 * cancel the run at any moment, and WORKERS workers (2 or 3) run the tasks; with -DLIMIT,
 * A and C name a limit of capacity 1 that another run uses too; with -DPAUSE, a pauser
 * pauses the run once and resumes it.
 *
 * Checked: (1) every node ends exactly once and the run finishes (no invalid end state:
 * nothing waits forever); (2) no attempt wins its start after the run stopped, and no body in
 * a task of its own begins after it; (3) a body that returned (succeeded) in the task's last
 * attempt, on a worker or in a task of its own, is reported succeeded unless a removal
 * cancelled it while it ran (that task ends cancelled, whatever its body returned); (4)
 * `remove` returning `prevented` means no body of that task begins afterwards; (5) every slot
 * a task took is given back exactly once (by a removal during its backoff, or else by its
 * worker). With -DLIMIT: (6) whenever a body of a task naming the limit begins, at most
 * capacity such bodies (of this run or the other, abandoned ones included) run; a task naming
 * it starts only holding its place; (7) every grant is given back exactly once (never more
 * often than granted, per requester; at the end nothing is in use, nothing queued, nothing
 * held or lingering). With -DPAUSE: (8) no task is handed out and no retry begins while the
 * run is paused, and the run ends unpaused. scripts/protocol-check's mutants show each of
 * these can fail.
 */

#ifndef WORKERS
#define WORKERS 2
#endif
#define N 3
#define NONE 255
#define BIT(n) (1 << (n))

/* GraphStateMachine.Phase (admitting lies between waiting and ready, as in GraphNodeTable) */
#define WAITING 0
#define ADMITTING 1
#define READY 2
#define RUNNING 3
/* an ended node's phase: how it ended (GraphNodeTable.Phase keeps a node's end there alone) */
#define ENDED_AS(outcome) (4 + outcome)
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
/* a removal cancelled the worker task that runs the node's body (design §5: that worker's task
 * stays cancelled, so the worker retires after the body; here the worker goes on, which is
 * what the fresh worker the driver starts in its place does) */
bool cancelledBody[N];
/* a timeout on a body its worker calls (TaskSpec.hasDeadlineOnWorker), and the run let that
 * body go (Flags.abandonedOnWorker) */
bool deadlineSpec[N];
bool abandonedOnWorker[N];

/* the AttemptInTask of each node: whether the worker claimed it, its result, its number */
bool attClaimed[N];
byte attResult[N];
byte attGen[N];

#ifdef PAUSE
/* GraphPause.isPaused: set by pause(), cleared by resume() or a stop */
bool paused = false;
#else
#define paused false
#endif

#ifdef LIMIT
/* One TaskLimit of capacity CAP, named by A and C, and used by another run (OTHER). */
#define CAP 1
#define OTHER N
#define QMAX 5
bool limited[N + 1];
/* TaskLimitStateMachine: places in use and the queue of requests (by requester; FIFO, as
 * requests of one priority are) */
byte inUse = 0;
byte queue[QMAX];
byte qLen = 0;
/* GraphAdmissions: the node holds its place (from admit to its end); its place waits for
 * its abandoned body (`lingering`); pause withdrew its request or its place (`withdrawn`) */
bool holds[N];
bool lingering[N];
bool withdrawn[N];
/* AttemptInTask.bodyReturned, negated: a body in a task of its own has begun or may begin
 * and has not returned */
bool bodyOut[N];
/* the other run's admit: the grant reached it */
bool otherGranted = false;
/* Attempt processes alive (the end waits for them: an abandoned body may hold a place) */
byte bodies = 0;
/* ghosts: bodies of limited tasks running now; grants made and not yet given back, by
 * requester (never given back more often than granted: never below 0) */
byte inside = 0;
byte held[N + 1];
/* what a transition leaves to do after the run's lock (GraphEffects.Lists: permitRequests,
 * cancelTickets, permitReleases), one bit per node, and a grant in hand (`g`, NONE when
 * none): every process that runs transitions has them, as the thread that ran a transition
 * performs its effects */
#define EFFECT_LOCALS byte req, canc, rel, e; byte g = NONE; bool back;
#else
#define EFFECT_LOCALS
#endif

/* ghost state, for the properties */
byte endCount[N];
bool stopped = false;
bool prevented[N];
/* removed while its body ran on a worker (Flags.removedWhileRunning): no attempt follows */
bool removedRunning[N];
/* a body returned (succeeded) in the task's latest attempt */
bool returnedOnWorker[N];
/* processes (workers, remover, canceller, pauser, the other run) that have ended */
byte exited = 0;
#ifdef NO_CANCEL
/* -DNO_CANCEL: nobody cancels the run (a configuration about removal, pause or timeouts) */
#define CANCELLER_ACTS false
#else
#define CANCELLER_ACTS true
#endif

#ifdef LIMIT
/* The limit's lock: the queue's head gets a place if one is free; the grant is in flight (in
 * `g`) until it reaches its run's admit. */
inline limitGrant() {
    if
    :: inUse < CAP && qLen > 0 ->
        g = queue[0];
        queue[0] = queue[1];
        queue[1] = queue[2];
        queue[2] = queue[3];
        queue[3] = queue[4];
        queue[4] = 0;
        qLen--;
        inUse++;
        held[g]++;
        /* the other run's admit is not modelled: its grant reaches it at once, and its
         * body is counted from there (a window no shorter than its body's) */
        if
        :: g == OTHER -> otherGranted = true; g = NONE; bodyBegins(OTHER)
        :: else -> skip
        fi
    :: else -> g = NONE
    fi
}

/* TaskLimit.acquire, under the limit's lock: queued behind any waiting request (no barging),
 * granted at once if a place is free */
inline requestPermit(who) {
    assert(qLen < QMAX);
    queue[qLen] = who;
    qLen++;
    limitGrant()
}

/* TaskLimit.cancel, under the limit's lock: removedFromQueue, or alreadyGranted — the limit
 * does nothing then, and the grant in flight reaches admit, which gives it back. (A cancel
 * may also overtake its request, performed by another thread: the request is then queued
 * after it, granted in turn and given back by admit the same way.) */
inline limitCancel(who) {
    if
    :: qLen > 0 && queue[0] == who ->
        queue[0] = queue[1]; queue[1] = queue[2]; queue[2] = queue[3]; queue[3] = queue[4]; queue[4] = 0; qLen--
    :: else ->
        if
        :: qLen > 1 && queue[1] == who ->
            queue[1] = queue[2]; queue[2] = queue[3]; queue[3] = queue[4]; queue[4] = 0; qLen--
        :: else ->
            if
            :: qLen > 2 && queue[2] == who -> queue[2] = queue[3]; queue[3] = queue[4]; queue[4] = 0; qLen--
            :: qLen > 3 && queue[3] == who -> queue[3] = queue[4]; queue[4] = 0; qLen--
            :: qLen > 4 && queue[4] == who -> queue[4] = 0; qLen--
            :: else -> skip
            fi
        fi
    fi
}

/* TaskLimit.release(1), under the limit's lock: the place goes back (property 7: once per
 * grant) and to the queue's head if one waits */
inline limitRelease(who) {
    assert(inUse > 0);
    inUse--;
    assert(held[who] > 0);
    held[who]--;
    limitGrant()
}

/* GraphStateMachine.admit, under the run's lock: a node still admitting in a run that runs
 * and is not paused holds the place and becomes ready; anything else gives the grant back */
inline admit() {
    if
#ifdef BUG_ADMIT_AFTER_END
    :: isRunning && !paused && !holds[g] ->
#else
    :: phase[g] == ADMITTING && isRunning && !paused ->
#endif
        holds[g] = true;
        phase[g] = READY;
        g = NONE
    :: else -> back = true
    fi
}

/* The grant in hand, after the limit's lock: to the other run, or to this run's admit; a
 * grant admit refuses goes back to the limit, which may hand it to the next in line. */
inline deliver() {
    do
    :: g == NONE -> break
    :: g != NONE ->
        atomic { admit() };
        if
        :: back -> atomic { back = false; limitRelease(g) }
        :: else -> skip
        fi
    od
}

/* The lowest node whose bit is set in `mask`, in `e` (limited nodes are 0 and 2). */
inline lowest(mask) {
    if
    :: mask & BIT(0) -> e = 0
    :: else -> if :: mask & BIT(1) -> e = 1 :: else -> e = 2 fi
    fi
}

/* GraphRunStorage.perform: the effects of the transitions just run, in order (cancels,
 * releases, requests), one limit step each */
inline performEffects() {
    do
    :: atomic { canc != 0 -> lowest(canc); canc = canc & ~BIT(e); limitCancel(e); e = 0 }
    :: atomic { canc == 0 && rel != 0 -> lowest(rel); rel = rel & ~BIT(e); limitRelease(e); e = 0 }; deliver()
    :: atomic { canc == 0 && rel == 0 && req != 0 -> lowest(req); req = req & ~BIT(e); requestPermit(e); e = 0 }; deliver()
    :: else -> break
    od
}

/* A body of a limited task begins (property 6) or returns. */
inline bodyBegins(n) {
    if
    :: n == OTHER || limited[n] -> inside++; assert(inside <= CAP)
    :: else -> skip
    fi
}
inline bodyEnds(n) {
    if
    :: n == OTHER || limited[n] -> inside--
    :: else -> skip
    fi
}

/* storage.bodyReturned: a body in a task of its own returned (or never began); a lingering
 * place goes back now */
inline bodyReturned(n) {
    bodyOut[n] = false;
    if
    :: lingering[n] -> lingering[n] = false; rel = rel | BIT(n)
    :: else -> skip
    fi
}
#else
#define bodyBegins(n) skip
#define bodyEnds(n) skip
#endif

/* A node whose dependencies are met: ready, or admitting (requesting its place) if it names
 * the limit; in a paused run its request waits for resume (it is withdrawn at once). */
inline becomeReady(n) {
#ifdef LIMIT
    if
    :: limited[n] && paused -> phase[n] = ADMITTING; withdrawn[n] = true
    :: limited[n] && !paused -> phase[n] = ADMITTING; req = req | BIT(n)
    :: else -> phase[n] = READY
    fi
#else
    phase[n] = READY
#endif
}

inline endQuietly(n, outcome) {
    assert(!HAS_ENDED(n));
    endCount[n]++;
    assert(endCount[n] == 1);
#ifdef LIMIT
    /* its request is cancelled; its place goes back, or waits for its abandoned body */
    if
    :: phase[n] == ADMITTING && !withdrawn[n] -> canc = canc | BIT(n)
    :: else -> skip
    fi;
    withdrawn[n] = false;
    if
#ifdef BUG_END_KEEPS_PLACE
    :: holds[n] && phase[n] == RUNNING ->
#else
    :: holds[n] ->
#endif
        holds[n] = false;
        if
#ifdef BUG_LINGER_RELEASES_TWICE
        :: detachedSpec[n] && bodyOut[n] -> lingering[n] = true; rel = rel | BIT(n)
#else
#ifndef BUG_NO_LINGER
        :: detachedSpec[n] && bodyOut[n] -> lingering[n] = true
#endif
#endif
        :: else -> rel = rel | BIT(n)
        fi
    :: else -> skip
    fi;
#endif
    phase[n] = ENDED_AS(outcome);
    ended++
}

/* GraphDeadlines.abandon, before the task's end: its slot goes back now, its worker's task is
 * cancelled, and the worker will record nothing */
inline letGo(n) {
    assert(running > 0);
    running--;
    abandonedOnWorker[n] = true;
    cancelledBody[n] = true
}

/* GraphStateMachine.stop: pending tasks end cancelled, open attempts are settled as cancelled
 * (abandoned) in the same transition, the driver cancels its group, a pause is cleared. */
inline stop() {
    if
    :: isRunning ->
        isRunning = false;
        stopped = true;
#ifdef PAUSE
        paused = false;
#endif
        i = 0;
        do
        :: i < N ->
            if
            :: phase[i] == WAITING || phase[i] == ADMITTING || phase[i] == READY -> endQuietly(i, CANCELLED)
            :: else -> skip
            fi;
            if
            :: registered[i] && attResult[i] == UNSET -> attResult[i] = CANCELLED
            :: else -> skip
            fi;
            /* GraphDeadlines.stopped: a body on its worker under a deadline is let go */
            if
            :: phase[i] == RUNNING && deadlineSpec[i] -> letGo(i); endQuietly(i, CANCELLED)
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
                :: remaining[s] == 0 && isRunning && !blocked[s] -> becomeReady(s); break
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
 * first. A settlement for an attempt already replaced (attGen moved on) goes nowhere. With
 * LIMIT, the body's return (or the task's end without one) is storage.bodyReturned, which
 * gives back a place that waited for it. */
proctype Attempt(byte n; byte gen) {
    bool open;
    EFFECT_LOCALS
    atomic {
        open = attGen[n] == gen && attResult[n] == UNSET;
        if
        /* (2) and (4): a body begins only in an open attempt, never after a stop or a removal
         * that prevented it */
        :: open -> assert(!stopped && !prevented[n]); bodyBegins(n)
        :: else ->
#ifdef LIMIT
            bodyReturned(n)
#else
            skip
#endif
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
            fi;
            bodyEnds(n);
#ifdef LIMIT
            bodyReturned(n)
#else
            skip
#endif
        }
    :: else -> skip
    fi;
#ifdef LIMIT
    performEffects();
    bodies--
#else
    skip
#endif
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

/* The run's deadline timer (GraphDeadlineTimer): it wakes once, at any moment, and ends C
 * timed out if C's body still runs on its worker and was not let go. */
proctype Deadline() {
    byte cur, out, s, i;
    EFFECT_LOCALS
    atomic {
        if
        :: isRunning && phase[2] == RUNNING && !abandonedOnWorker[2] ->
            letGo(2);
            end(2, TIMEDOUT);
            finishIfDone()
        :: else -> skip
        fi
    }
}

#ifdef BUG_TAKE_WHILE_PAUSED
#define TAKE_MAY_START isRunning
#else
#define TAKE_MAY_START (isRunning && !paused)
#endif
#ifdef BUG_RETRY_WHILE_PAUSED
#define RETRY_WAITS_FOR_RESUME false
#else
#define RETRY_WAITS_FOR_RESUME paused
#endif

proctype Worker() {
    byte n, att, outcome, cur, out, s, i;
    bool ok, waitForResume;
    EFFECT_LOCALS
take:
    /* takeNext (in complete, or the driver's nextForDriver), under the run's lock; a paused
     * run hands nothing out (GraphWorkers.startLimit is 0) */
    atomic {
        if
        :: finished -> goto done
        :: TAKE_MAY_START && phase[0] == READY -> n = 0
        :: TAKE_MAY_START && phase[1] == READY -> n = 1
        :: TAKE_MAY_START && phase[2] == READY -> n = 2
        fi;
        /* (2) the start is won under the lock, only while running; (8) and not paused */
        assert(!stopped && !paused);
#ifdef LIMIT
        /* a task naming the limit starts only holding its place */
        assert(!limited[n] || holds[n]);
#endif
        phase[n] = RUNNING;
        running++;
        if
        :: !detachedSpec[n] -> bodyBegins(n)
        :: else -> skip
        fi;
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
            :: registered[n] && attResult[n] == UNSET && !attClaimed[n] ->
                attClaimed[n] = true;
                ok = true;
#ifdef LIMIT
                bodyOut[n] = true;
                bodies++
#else
                skip
#endif
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
        /* The body, on this worker: one step, since nothing it does touches the run. A
         * removal (cancelledBody) or a stop (cancelledAll) cancels the worker's task. */
        atomic {
            assert(!prevented[n]);
            if
            :: outcome = SUCCEEDED
            :: outcome = FAILED
            :: cancelledAll || cancelledBody[n] -> outcome = CANCELLED
            fi;
            /* a failure while cancelled is reported cancelled (outcome(of:)) */
            if
            :: outcome == FAILED && cancelledAll -> outcome = CANCELLED
            :: else -> skip
            fi;
            /* (3) is about bodies that returned: a throw is not one */
            returnedOnWorker[n] = outcome == SUCCEEDED;
            /* counted (6) from its take or its retry's start, the step before it */
            bodyEnds(n)
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
#ifdef LIMIT
        performEffects();
#endif
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
#ifdef LIMIT
#ifndef BUG_RETRY_NO_WAIT
        /* storage.awaitBodyReturned: a retry of a limited task waits for its abandoned body,
         * so two bodies of one task never share one place */
        if
        :: limited[n] && detachedSpec[n] -> (!bodyOut[n])
        :: else -> skip
        fi;
#endif
#endif
retryStarting:
        atomic {
            /* retryStarting: the one place a retry wins the right to start; in a paused run
             * the attempt loop waits for resume (awaitResume) and asks again */
            if
            :: isRunning && phase[n] == RUNNING && RETRY_WAITS_FOR_RESUME -> ok = false; waitForResume = true
            :: isRunning && phase[n] == RUNNING && !RETRY_WAITS_FOR_RESUME ->
                /* (2), (4), and (8): no attempt begins in a paused run */
                assert(!stopped && !prevented[n] && !removedRunning[n] && !paused);
                backingOff[n] = false;
                ok = true;
                if
                :: !detachedSpec[n] -> bodyBegins(n)
                :: else -> skip
                fi;
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
        :: waitForResume -> atomic { !paused; waitForResume = false }; goto retryStarting
        :: else -> skip
        fi;
        if
        :: ok -> goto attempt
        :: else -> outcome = CANCELLED
        fi
    :: else -> skip
    fi;
complete:
    atomic {
        /* complete: ends the node unless a removal during the backoff already has (a node
         * removed while its body ran ends cancelled, whatever the body returned), and gives
         * the slot back unless that removal did */
        registered[n] = false;
        if
        :: HAS_ENDED(n) && backingOff[n] -> skip
#ifndef BUG_LET_GO_COMPLETES
        /* let go by its deadline, a removal or a stop, which gave its slot back */
        :: abandonedOnWorker[n] -> skip
#endif
        :: else -> assert(running > 0); running--
        fi;
        if
#ifdef BUG_REMOVED_KEEPS_OUTCOME
        :: !HAS_ENDED(n) -> end(n, outcome)
#else
        :: !HAS_ENDED(n) && removedRunning[n] -> end(n, CANCELLED)
        :: !HAS_ENDED(n) && !removedRunning[n] -> end(n, outcome)
#endif
        :: else -> skip
        fi;
        finishIfDone()
    };
#ifdef LIMIT
    performEffects();
#endif
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
    EFFECT_LOCALS
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
        /* abandoned: a body on its worker under a deadline is let go, the task ends now */
        :: phase[r] == RUNNING && deadlineSpec[r] ->
            letGo(r);
            end(r, CANCELLED)
        /* stillRunning: the body's worker task is cancelled (cancelWorker), and the task ends
         * cancelled when the body ends; no attempt follows it */
        :: phase[r] == RUNNING && !registered[r] && !backingOff[r] && !deadlineSpec[r] ->
            removedRunning[r] = true;
            cancelledBody[r] = true
        /* prevented (an admitting task's request is cancelled, a place it holds goes back) */
        :: phase[r] == WAITING || phase[r] == ADMITTING || phase[r] == READY ->
            end(r, CANCELLED);
            prevented[r] = true
        fi;
        finishIfDone()
    };
#ifdef LIMIT
    performEffects();
#endif
    exited++
}

proctype Canceller() {
    byte i;
    EFFECT_LOCALS
    if
    :: CANCELLER_ACTS -> atomic {
           stop();
           if
           :: ended == N -> finished = true
           :: else -> skip
           fi;
           i = 0
       };
#ifdef LIMIT
        performEffects();
#endif
        /* storage.cancel(): the driver's task is cancelled, and with it every worker */
        cancelledAll = true
    :: skip
    fi;
    exited++
}

#ifdef PAUSE
/* pause(), then resume(); a stop in between clears the pause, and resume does nothing. With
 * LIMIT, pause withdraws the run's requests and gives back the places of tasks not yet
 * started (they wait admitting again); resume requests them again. */
proctype Pauser() {
    byte i;
    EFFECT_LOCALS
    atomic {
        if
        :: isRunning && !finished && !paused ->
            paused = true;
#ifdef LIMIT
            i = 0;
            do
            :: i < N ->
                if
                :: phase[i] == ADMITTING && !withdrawn[i] -> withdrawn[i] = true; canc = canc | BIT(i)
                :: phase[i] == READY && holds[i] ->
                    holds[i] = false;
                    phase[i] = ADMITTING;
                    withdrawn[i] = true;
                    rel = rel | BIT(i)
                :: else -> skip
                fi;
                i++
            :: else -> i = 0; break
            od
#else
            skip
#endif
        :: else -> skip
        fi
    };
#ifdef LIMIT
    performEffects();
#endif
    atomic {
        if
        :: paused ->
            paused = false;
#ifdef LIMIT
            i = 0;
            do
            :: i < N ->
                if
#ifndef BUG_RESUME_FORGETS
                :: withdrawn[i] -> withdrawn[i] = false; req = req | BIT(i)
#endif
                :: else -> skip
                fi;
                i++
            :: else -> i = 0; break
            od
#else
            skip
#endif
        :: else -> skip
        fi
    };
#ifdef LIMIT
    performEffects();
#endif
    exited++
}
#endif

#ifdef LIMIT
/* Another run with one task naming the limit: it requests a place, runs its body holding it
 * and gives it back. */
proctype OtherRun() {
    EFFECT_LOCALS
#ifndef OTHER_FIRST
    atomic { requestPermit(OTHER) };
    deliver();
#endif
    /* its body returns, and its place goes back */
    atomic { otherGranted -> otherGranted = false; bodyEnds(OTHER); limitRelease(OTHER) };
    deliver();
    exited++
}
#define OTHERS 1
#else
#define OTHERS 0
#endif

#ifdef PAUSE
#define PAUSERS 1
#else
#define PAUSERS 0
#endif

/* The driver: after a stop, cancels its task group (driverMustCancelAll). */
proctype Driver() {
endWaitingForAStop:
    if
    :: stopped -> cancelledAll = true
    fi
}

init {
    byte w;
    EFFECT_LOCALS
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
#ifdef DEADLINE_C
    deadlineSpec[2] = true;
#endif
#ifdef LIMIT
    limited[0] = true;
    limited[2] = true;
#endif
    remaining[1] = 1;
    atomic {
        /* insert: roots are ready (or admitting) */
        becomeReady(0);
        phase[1] = WAITING;
        becomeReady(2);
#ifdef LIMIT
#ifdef OTHER_FIRST
        /* -DOTHER_FIRST: the other run holds the place when this run starts */
        requestPermit(OTHER);
#endif
        run OtherRun()
#else
        skip
#endif
    };
#ifdef LIMIT
    /* GraphRunStorage.init applies the insert's effects (the roots' requests, and the admits
     * of what they are granted) before start() starts the driver and returns the run: only
     * the other run goes on meanwhile */
    performEffects();
#endif
    atomic {
        w = 0;
        do
        :: w < WORKERS -> run Worker(); w++
        :: else -> break
        od;
        run Remover();
        run Canceller();
#ifdef PAUSE
        run Pauser();
#endif
#ifdef DEADLINE_C
        run Deadline();
#endif
        run Driver()
    };
    /* The workers, the remover, the canceller (and the pauser, the other run, every body in a
     * task of its own with LIMIT) have ended (the driver waits for a stop that may never
     * come; a timer or, without LIMIT, an abandoned body may still run). */
    (exited == WORKERS + 2 + PAUSERS + OTHERS);
#ifdef LIMIT
    (bodies == 0);
#endif
    assert(finished);
    /* (1) */
    assert(endCount[0] == 1 && endCount[1] == 1 && endCount[2] == 1);
    /* (5) every slot taken was given back exactly once */
    assert(running == 0);
#ifdef PAUSE
    assert(!paused);
#endif
#ifdef LIMIT
    /* (7) every grant was given back exactly once, nothing waits in the limit */
    assert(inUse == 0 && qLen == 0 && inside == 0);
#endif
    w = 0;
    do
    :: w < N ->
        /* (3) a body that returned in the task's last attempt is reported succeeded, unless a
         * removal cancelled it while it ran: that task ends cancelled */
        assert(!returnedOnWorker[w] || removedRunning[w] || abandonedOnWorker[w] || phase[w] == ENDED_AS(SUCCEEDED));
        /* a body let go ended its task timed out or cancelled */
        assert(!abandonedOnWorker[w] || phase[w] == ENDED_AS(TIMEDOUT) || phase[w] == ENDED_AS(CANCELLED));
        assert(!removedRunning[w] || phase[w] == ENDED_AS(CANCELLED));
#ifdef LIMIT
        assert(held[w] == 0 && !holds[w] && !lingering[w]);
#endif
        w++
    :: else -> break
    od
}
