"""Benchmark: drain N assets onto the aws target, whose bottleneck is MediaConvert's queue, not a create rate.

    bench/drain --provider aws [--assets 60] [--queue 4] [--encode-delay 5] [--concurrency 5]

The stack deployed with Provider=aws on the emulator (LocalRun: the MediaConvert simulator, every original archived
first, the CloudFront edge), each row a real 2-second video on a local file server. The simulator's queue runs Q
jobs at once, each lengthened by D seconds (its `--encode-delay`: a stand-in for a real encode's minutes), so the
queue is the bottleneck by design, as it is on AWS. Not a test: it prints figures.

Figures, from the jobs MediaConvert itself reports (ListJobs' Timing):
  drain                 last job COMPLETE - first job SUBMITTED
  ideal                 sum of the jobs' PROGRESSING time / Q: the queue never idle, never over-full
  drain ratio           drain / ideal (target <= 1.10): how much of the drain the queue waited for work
  jobs per asset        and the assets with more than one job (target 0: a second transcode is billed)
  settled               every asset ready in the ledger, from the first send
"""

from __future__ import annotations

import json
import time

from infra.captions import FileServer
from infra.demo_aws import serve_sample_media
from infra.localrun import LocalRun
from infra.localrun_aws import job_tally, sample_video
from infra.toolchain import ROOT


def jobs_timing(jobs: list[dict]) -> tuple[float, float, float]:
    """(first submit, last finish, the jobs' summed PROGRESSING seconds) of the jobs that completed (pure)."""
    done = [j["Timing"] for j in jobs if j.get("Status") == "COMPLETE" and j.get("Timing", {}).get("FinishTime")]
    if not done:
        return 0.0, 0.0, 0.0
    first = min(t["SubmitTime"].timestamp() for t in done)
    last = max(t["FinishTime"].timestamp() for t in done)
    busy = sum(t["FinishTime"].timestamp() - t["StartTime"].timestamp() for t in done)
    return first, last, busy


def run(args) -> int:
    n, queue = args.assets, args.queue
    video = sample_video(ROOT / ".local" / "media")
    with FileServer() as files:
        paths = [f"/media/bench-{i:05d}.mp4" for i in range(n)]
        serve_sample_media(files, video, paths)
        params = {
            "MaximumConcurrency": args.concurrency,
            "UploaderTimeout": "60",
            "ArchiveConcurrency": "5",
            "TrackFetchTestOrigins": files.origin,  # the archive worker fetches the originals through its guard
            "ProviderMaxInFlight": str(2 * queue),  # the queue full, and as many waiting SUBMITTED
        }
        mediaconvert = ["--encode-delay", f"{args.encode_delay:g}"]
        with LocalRun([], params, label="bench", provider="aws", mediaconvert_args=mediaconvert,
                      queue_concurrency=queue) as local:  # fmt: skip
            bodies = [json.dumps({"id": f"bench/aws/{i:05d}", "source_url": files.url(p)}) for i, p in enumerate(paths)]
            started = time.time()
            local.send(bodies)
            ready = 0
            while time.time() - started < args.timeout:
                ready = sum(1 for item in local.items("ready") if item["asset_id"].startswith("bench/aws/"))
                if ready >= n:
                    break
                time.sleep(2)
            settled = time.time() - started
            assert local.mediaconvert is not None  # started by LocalRun for the aws target
            jobs = local.mediaconvert.jobs()
    first, last, busy = jobs_timing(jobs)
    tally = job_tally(jobs)
    drain, ideal = last - first, busy / queue
    heading = f"provider=aws, N={n} assets, queue Q={queue} jobs at once, encode +{args.encode_delay:g} s"
    print(f"\n=== bench/drain: {heading} ===")
    print(f"jobs                     {tally.line()}")
    print(f"mean job (PROGRESSING)   {busy / max(tally.by_status.get('COMPLETE', 0), 1):.1f} s")
    print(f"drain                    {drain:.1f} s (first job submitted -> last complete)")
    print(f"ideal                    {ideal:.1f} s (the jobs' time / Q: the queue never idle)")
    print(f"drain ratio              {drain / ideal if ideal else float('nan'):.3f}   (target <= 1.10)")
    print(f"all ready in the ledger  {ready} of {n}, {settled:.1f} s after the first send")
    print(f"duplicate jobs           {tally.duplicate_assets}   (target 0)")
    return 0 if ready == n and tally.duplicate_assets == 0 else 1
