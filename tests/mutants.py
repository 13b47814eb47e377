"""One-line mutants of the rules SPEC names, each run against the tests that guard it.

Each mutant is made in a copy of the checkout (the tracked files), never in the checkout
itself, and the tests run there; a mutant the tests do not kill is a rule no test guards.
Prints the kill table and exits 1 when a mutant survives.

    python tests/mutants.py            # every mutant
    python tests/mutants.py 3 7        # only these
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    rule: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    more: tuple[tuple[str, str], ...] = ()  # further (old, new) edits of the same file: a rule held twice


POISON = "tests/test_distributed_poison.py"
GUARDS = "tests/test_rule_guards.py"
PACE = "tests/test_distributed_pace.py"
POLITE = "tests/test_distributed_politeness.py"
CREDENTIALS = "tests/test_audit_credentials.py"
AUDIT_HOSTS = "tests/test_audit_hosts.py"
COVERAGE = "tests/test_coverage.py"
RENDER = "tests/test_render.py"
RENDER_MEMORY = "tests/test_render_memory.py"
SHRINK = "tests/test_shrink_changes.py"
PUBLISHED = "tests/test_check_published.py"
S3 = "tests/test_publish_s3.py"
CHECK = "tests/test_check.py"
PLANTED = "tests/test_planted_links.py"
AUDIT_CSV = "tests/test_audit_csv.py"
HOSTS = "tests/test_hosts.py"
SHARED_HOSTS = "tests/test_hosts_shared.py"
INDEX_HOST = "tests/test_hosts_index.py"
MUTANTS = [
    Mutant("spider refuses disallowed links before the budget", "crawler/spiders/following.py",
           "is not None and not rules.allowed(", "is not None and False and not rules.allowed(",
           (f"{GUARDS}::test_disallowed_links_do_not_spend_the_page_budget",)),
    Mutant("conflicting canonicals are ignored", "crawler/run/reading.py",
           "if len(normal) == 1:", "if len(normal) >= 1:", (f"{GUARDS}::test_conflicting_canonicals_are_ignored",)),
    Mutant("Crawl-delay is capped", "crawler/pace.py",
           "kept = min(crawl_delay, self.cap) if self.cap > 0 else crawl_delay", "kept = crawl_delay",
           (f"{GUARDS}::test_a_crawl_delay_past_the_cap_is_capped", "tests/test_pace.py")),
    Mutant("Retry-After is capped", "crawler/pace.py",
           "retry_after = min(retry_after, self.cap) if self.cap > 0 else retry_after", "pass",
           (f"{GUARDS}::test_a_retry_after_past_the_cap_is_capped", "tests/test_pace.py")),
    Mutant("Crawl-delay keeps one request in flight", "crawler/pace.py",
           "        if self.crawl_delay > 0:\n            return 1\n", "", ("tests/test_pace.py",)),
    Mutant("nothing lowers the delay during a Retry-After", "crawler/pace.py",
           "if self.fixed and self.delay > self.floor and not self.held(now):",
           "if self.fixed and self.delay > self.floor:", ("tests/test_pace.py",)),
    Mutant("a fast error page does not speed the crawl up", "crawler/pace.py",
           "if status != 200 and moved <= self.delay:", "if False:", ("tests/test_pace.py",)),
    Mutant("the politeness owner sets every slot", "crawler/extensions/politeness.py",
           "        slot.delay = pace.delay\n", "", ("tests/test_adaptive_speed.py",)),
    Mutant("site-wide in-flight limit", "crawler/distributed/coordination.py",
           "if redis.call('ZCARD', KEYS[2]) >= limit then", "if redis.call('ZCARD', KEYS[2]) > limit then",
           (f"{GUARDS}::test_the_site_wide_in_flight_limit_is_never_passed",)),
    Mutant("a lease is acknowledged only once its items are pushed", "crawler/distributed/link.py",
           "if state.output_done and state.items <= 0 and state.outbox_mark <= self.offered",
           "if state.output_done and state.outbox_mark <= self.offered",
           ("tests/test_distributed_frontier.py::test_a_lease_is_acknowledged_only_once_its_output_is_in_redis",)),
    Mutant("a lease is acknowledged only once its offers are queued", "crawler/distributed/link.py",
           "if state.output_done and state.items <= 0 and state.outbox_mark <= self.offered",
           "if state.output_done and state.items <= 0",
           ("tests/test_distributed_frontier.py::test_a_lease_is_acknowledged_only_once_its_output_is_in_redis",)),
    Mutant("the configuration's signature is checked", "crawler/distributed/config.py",
           "if not sealed(secret, \"config\", body, signature):", "if False:", (POISON,)),
    Mutant("a worker takes whitelisted options only", "crawler/distributed/config.py",
           "    kind = SHARED_OPTIONS.get(name)\n", '    kind = SHARED_OPTIONS.get(name, "str")\n', (POISON,)),
    Mutant("a worker given --url joins that site only", "crawler/cli/worker.py",
           "if args.url and site_root(", "if False and site_root(", (POISON,)),
    Mutant("a worker given its secret in a file seals what it writes", "crawler/cli/worker.py",
           '    settings.set("SITEMAP_SHARED_SECRET_FILE", secret_file, priority="cmdline")', "    pass",
           (f"{POISON}::test_a_worker_given_the_secret_in_a_file_seals_what_it_writes",)),
    Mutant("a shared crawl needs Redis AUTH", "settings/distributed.py",
           "    if insecure and local:\n", "    if True:\n", (POISON,)),
    Mutant("a queued request carries no rule switch", "crawler/distributed/codec.py",
           '"sitemap_hops", "unconditional"}', '"sitemap_hops", "unconditional", "dont_obey_robotstxt"}',
           ("tests/test_distributed_frontier.py::test_the_codec_refuses_what_is_not_a_queued_request",)),
    Mutant("robots.txt exempts only the sitemaps it names", "crawler/downloadermiddlewares/robotstxt.py",
           'if request.meta.get("sitemap_file") and request.url in self._named.get(_origin(request), ()):',
           'if request.meta.get("sitemap_file"):',
           (POISON, f"{GUARDS}::test_robots_txt_exempts_the_sitemaps_it_names_and_not_the_files_they_list")),
    Mutant("the exporter re-checks scope", "crawler/distributed/vetting.py",
           "if not self.scope.contains(facts.url):", "if False:", (POISON,)),
    Mutant("the exporter refuses pages never queued", "crawler/distributed/vetting.py",
           "if not seen.get(facts.url):", "if False:", (POISON,)),
    Mutant("the exporter re-checks robots.txt", "crawler/distributed/vetting.py",
           "if not rules.can_fetch(facts.url, self.agent):", "if False:", (POISON,)),
    Mutant("items are sealed by the workers", "crawler/distributed/items.py",
           "if self.secret is not None and not sealed(self.secret, self.context, data or b\"\", fields.get(b\"s\")):",
           "if False:", (POISON,)),
    Mutant("the shared robots.txt is sealed by the workers", "crawler/distributed/robots.py",
           "if secret is not None and not sealed(secret, context,", "if False and not sealed(secret, context,",
           (POISON,)),
    Mutant("a robots.txt lock no worker took is removed", "crawler/distributed/robots.py",
           "if ttl == -1 or ttl > self.lock_ms:", "if False:", (POISON,)),
    Mutant("a queued URL no request can be made of is refused", "crawler/distributed/codec.py",
           "        _ = parts.port  # a port out of range raises here\n", "", ("tests/test_distributed_frontier.py",)),
    Mutant("a live worker renews its leases", "crawler/distributed/link.py",
           "        if not self.leases or time.monotonic() - self.renewed_at < self.lease_seconds / 8:",
           "        if True:", (f"{PACE}::test_a_live_worker_waiting_for_the_pace_keeps_its_leases",)),
    Mutant("a worker asked to stop hands its leases back", "crawler/distributed/link.py",
           "        await self.frontier.hand_back(rest)\n", "",
           (f"{PACE}::test_a_worker_asked_to_stop_hands_its_leases_back_at_once",)),
    Mutant("a Retry-After holds the site for every worker of a shared crawl", "crawler/extensions/politeness.py",
           "            self.crawler.signals.send_catch_log(signal=site_held, seconds=pace.held_until - now,"
           " url=request.url)\n",
           "", (f"{POLITE}::test_a_retry_after_holds_the_whole_site_for_every_worker",)),
    Mutant("every worker's grant waits for a site held by a Retry-After", "crawler/downloadhandlers/sharedpace.py",
           "            site.held_until = now + await site.pace.held_for()\n", "",
           (f"{POLITE}::test_a_retry_after_holds_the_whole_site_for_every_worker",)),
    Mutant("one coordinator per crawl", "crawler/distributed/config.py",
           "    claim(redis, crawl)  # never under a coordinator of this crawl that is still running\n", "",
           ("tests/test_distributed_resume.py::test_a_second_coordinator_of_a_running_crawl_is_refused",)),
    Mutant("only a dead worker's leases are adopted early", "crawler/distributed/stream.py",
           "if name == self.consumer or name in living or not consumer.get(\"pending\"):",
           "if name == self.consumer or not consumer.get(\"pending\"):",
           ("tests/test_distributed_frontier.py::test_a_dead_workers_leases_are_taken_a_quarter_lease_after_its_heartbeat_went",)),
    Mutant("a renewal never takes back a lease another worker took", "crawler/distributed/stream.py",
           "  if pending[1] and pending[1][2] == ARGV[2] then", "  if pending[1] then",
           ("tests/test_distributed_frontier.py::test_a_renewed_lease_stays_with_its_live_worker_and_a_taken_one_is_not_taken_back",)),
    Mutant("a worker holds no more leases than its share of the site's pace", "crawler/distributed/link.py",
           "        if pace is not None and interval <= 0:\n", "        if True:\n",
           (f"{PACE}::test_a_killed_worker_costs_at_most_its_leases_and_the_summary_says_how_many",)),
    Mutant("a dead worker's grant of the site's pace is given back", "crawler/distributed/coordination.py",
           "  if holder == nil or redis.call('EXISTS', ARGV[6] .. holder) == 0 then", "  if holder == nil then",
           ("tests/test_distributed_frontier.py::test_the_grant_of_a_worker_whose_heartbeat_lapsed_is_given_back",)),
    Mutant("the site's pace is taken as each download goes out", "crawler/downloadhandlers/sharedpace.py",
           "        if delay <= 0 and concurrency >= self.live and not always:", "        if True:",
           (f"{PACE}::test_the_crawl_delay_holds_on_redis_clock_whatever_the_workers_clocks_say",)),
    Mutant("pace grants no worker could hold are removed", "crawler/distributed/coordination.py",
           "redis.call('ZREMRANGEBYSCORE', KEYS[2], '(' .. (now + hold), '+inf')", "", (POISON,)),
    Mutant("a next-allowed time past any delay is reset", "crawler/distributed/coordination.py",
           "if next_at > now + math.max(delay, longest) then", "if false then", (POISON,)),
    Mutant("a heartbeat without a time-to-live is removed", "crawler/distributed/coordination.py",
           "if not isinstance(ttl, int) or not 0 < ttl <= Workers.MAX_TTL * 1000:", "if not isinstance(ttl, int):",
           (POISON,)),
    Mutant("lastmods are compared as moments", "crawler/state/lastmod.py",
           "if moment and since and until and since < moment <= until:",
           "if hint and last_seen < hint <= now:", ("tests/test_lastmod.py",)),
    Mutant("a lastmod is never later than the fetch", "crawler/state/lastmod.py",
           "    date = not_after(claimed, now)\n", "    date = claimed\n",
           (f"{GUARDS}::test_a_page_dated_in_the_future_is_listed_with_the_fetch_time",)),
    Mutant("local workers end with a run that fails", "crawler/cli/shared.py",
           "    def __exit__(self, *_: object) -> None:\n        self.finish()",
           "    def __exit__(self, *_: object) -> None:\n        pass", ("tests/test_shared_orchestration.py",)),
    Mutant("a local worker that will not end is killed", "crawler/cli/shared.py",
           "                process.kill()\n", "", ("tests/test_shared_orchestration.py",)),
    Mutant("a robots.txt lock is released only by its holder", "crawler/distributed/robots.py",
           "await self._unlock(keys=[lock], args=[self.name])", "await self.redis.delete(lock)",
           ("tests/test_shared_orchestration.py",)),
    Mutant("scope is scheme and host", "crawler/scope.py",
           'if url.startswith(self._prefix) or url == self.origin:', "if True:", ("tests/test_crawl_site.py",)),
    Mutant("noindex pages are left out", "pipelines/indexability.py",
           'if is_noindex(item.robots):', "if False:", ("tests/test_crawl_site.py",)),
    Mutant("non-canonical pages are left out", "pipelines/indexability.py",
           "if item.canonical and item.canonical != item.url:", "if False:", ("tests/test_crawl_site.py",)),
    Mutant("staging credentials are added on the staging origin only", "crawler/downloadermiddlewares/staging.py",
           "site_root(request.url) in self.access.origins", "True", (CREDENTIALS,)),
    Mutant("credentials a request carries off the staging origin are stripped",
           "crawler/downloadermiddlewares/staging.py",
           "        for name in self.names:\n            request.headers.pop(name, None)\n", "", (CREDENTIALS,)),
    Mutant("the preflight sends no credentials on a robots.txt hop off staging", "crawler/audit/preflight.py",
           "headers=headers if site_root(url) == root else {})", "headers=headers)", (CREDENTIALS,)),
    Mutant("the preflight follows robots.txt redirects as the crawl does", "crawler/audit/preflight.py",
           "for _ in range(MAX_ROBOTS_REDIRECTS + 1):", "for _ in range(1):", (CREDENTIALS,)),
    Mutant("the audit reads no robots.txt sitemap on another origin", "crawler/audit/sources.py",
           "if not hosts.on_staging(staging):", "if False:", (CREDENTIALS,)),
    Mutant("scope keeps an audit off other origins", "crawler/scope.py",
           'if url.startswith(self._prefix) or url == self.origin:', "if True:",
           (f"{CREDENTIALS}::test_every_way_off_the_origin_leaves_the_other_origin_untouched",)),
    Mutant("the browser fetches nothing off scope", "crawler/render/guard.py",
           "    if site_root(request.url) not in roots:\n", "    if False:\n", (RENDER,)),
    Mutant("a browser fetch robots.txt disallows is reported refused", "crawler/downloadermiddlewares/render.py",
           "                return Refused(\"disallowed by robots.txt\")", "                raise", (RENDER,)),
    Mutant("a raw noindex is not rendered", "crawler/downloadermiddlewares/render.py",
           'if is_noindex(directives) or not why:', "if not why:", (RENDER,)),
    Mutant("the browser's context is replaced", "crawler/render/browser.py",
           "if session.renders >= self.recycle_after:", "if False:", (RENDER_MEMORY,)),
    Mutant("the browser is restarted over its memory cap", "crawler/render/browser.py",
           "if usage.used > self.memory_cap and session", "if False and session", (RENDER_MEMORY,)),
    Mutant("a sudden shrink publishes nothing", "pipelines/export.py",
           "if refusal := self._shrink_refusal(state):", "if refusal := None:", (SHRINK,)),
    Mutant("the shrink is measured against the published set", "crawler/sitemaps/shrink.py",
           "if not limit or not before or now >= before * (1 - limit / 100):", "if not limit or not before:",
           (SHRINK,)),
    Mutant("a URL back in the set is a change (IndexNow, changes file)", "crawler/state/lastmod.py",
           "changed=(changed or relisted) and not resumed", "changed=changed and not resumed", (SHRINK,)),
    Mutant("a wrong public copy fails the run", "crawler/cli/crawl.py",
           "code = EXIT_PUBLIC_COPY_WRONG if not checked.ok and code == 0 else code", "code = code",
           (PUBLISHED,)),
    Mutant("the public copy is tried again within --check-wait", "crawler/cli/published_check.py",
           "if result.ok or time.monotonic() + pause > give_up:", "if True:", (PUBLISHED,)),
    Mutant("a SIGTERM stops the check of the public copy", "crawler/cli/published_check.py",
           "for signum in (signal.SIGTERM, signal.SIGINT)}", "for signum in ()}", (PUBLISHED,)),
    Mutant("the public copy is compared with what was published", "crawler/cli/published_check.py",
           "            expect=config.output_dir,\n", "", (PUBLISHED,)),
    Mutant("S3: the index is uploaded after its shards", "crawler/sitemaps/remote.py",
           "[*shards, *([index_name] if index_name in changed else [])]",
           "[*([index_name] if index_name in changed else []), *shards]", (S3,)),
    Mutant("S3: only our own objects are deleted", "crawler/sitemaps/remote.py",
           "stale = [name for name in manifest if name not in local and name != MANIFEST_NAME]",
           "stale = [name for name in existing if name not in local and name != MANIFEST_NAME]", (S3,)),
    Mutant("S3: a shard whose upload was not confirmed is uploaded again", "crawler/sitemaps/remote.py",
           "changed = [name for name in local if manifest.get(name) != local[name] or name not in existing]",
           "changed = [name for name in local if (manifest.get(name) or local[name]) != local[name]"
           " or name not in existing]", (S3,)),
    Mutant("S3: gzip shards are application/gzip", "crawler/sitemaps/remote.py",
           'content_type = "application/gzip" if name.endswith(".gz") else "application/xml"',
           'content_type = "application/xml"', (S3,)),
    Mutant("S3: a SIGTERM stops the upload", "crawler/cli/publishing.py",
           "for signum in (signal.SIGTERM, signal.SIGINT)}", "for signum in ()}", (S3,)),
    Mutant("check: a loc on another origin is never sampled or fetched", "crawler/check/plan.py",
           "if origin_of(item.loc) == self.origin:", "if True:",
           (f"{CHECK}::test_a_loc_on_another_origin_is_a_finding_and_never_fetched",)),
    Mutant("check --expect reads no file outside DIR", "crawler/check/expected.py",
           "if not inside or not local.resolve().is_relative_to(expect.resolve()) or not local.is_file():",
           "if not local.is_file():", (f"{CHECK}::test_expect_reads_no_file_outside_its_folder",)),
    Mutant("audit CSV cells starting like a formula are neutralised", "crawler/audit/report.py",
           "if isinstance(value, str) and value.startswith(_FORMULA_STARTS):", "if False:",
           (f"{AUDIT_CSV}::test_no_cell_of_the_audits_csv_files_reads_as_a_formula",
            f"{AUDIT_CSV}::test_a_cell_starting_like_a_formula_gets_a_quote")),
    Mutant("a lock file is opened without following a symlink", "crawler/state/lock.py",
           "os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC", "os.O_RDWR | os.O_CREAT | os.O_CLOEXEC",
           (f"{PLANTED}::test_a_lock_file_that_is_a_symlink_is_refused",)),
    Mutant("a shard in OUT replaced by a symlink is replaced", "crawler/sitemaps/publish.py",
           " and path.is_file() and not path.is_symlink()", " and path.is_file()",
           (f"{PLANTED}::test_a_shard_or_index_replaced_by_a_symlink_is_replaced_by_our_file",)),
    Mutant("a URL with credentials is refused", "crawler/cli/usage.py",
           'if "@" in netloc:', "if False:",
           (f"{PLANTED}::test_a_url_with_credentials_is_refused_without_echoing_them",)),
    Mutant("audit --compare: a report.json nested too deep is refused in one line", "crawler/audit/changes.py",
           "except RecursionError:", "except ():",
           (f"{PLANTED}::test_an_earlier_audit_that_is_not_one_is_refused_in_one_line",)),
    Mutant("--check-wait without --check-published is a usage error", "crawler/cli/crawl.py",
           'if getattr(args, "check_wait", None) is not None and not config.check_published:', "if False:",
           (f"{PUBLISHED}::test_check_wait_without_check_published_is_a_usage_error",)),
    Mutant("S3: a prefix over 924 bytes is refused", "crawler/sitemaps/remote.py",
           "if len(location.prefix.encode()) > MAX_PREFIX_BYTES:", "if False:", (f"{S3}::test_bucket_urls",)),
    Mutant("validate says double gzip", "crawler/validate/read.py",
           'if data[:2] == b"\\x1f\\x8b":', "if False:", ("tests/test_validate.py::test_hostile_input_is_refused",)),
    Mutant("check: a download in flight ends at the deadline", "crawler/spiders/check.py",
           '            "deadline": self._ends,\n', "",
           (f"{CHECK}::test_the_deadline_ends_the_check_with_an_error",)),
    Mutant("check: requests waiting in the slot are failed at the deadline", "crawler/spiders/check.py",
           "while slot.queue:", "while False:", (f"{CHECK}::test_the_deadline_ends_a_check_held_by_its_crawl_delay",)),
    Mutant("check keeps robots.txt's Crawl-delay", "crawler/spiders/check.py",
           "self.pace.robots(self.plan.crawl_delay)", "pass",
           (f"{CHECK}::test_the_check_keeps_the_crawl_delay_robots_txt_asks_for",)),
    Mutant("check: an endless chunked body is a size finding", "crawler/spiders/check.py",
           " or isinstance(failure.value, DownloadCancelledError)", "",
           (f"{CHECK}::test_an_endless_body_is_a_size_finding_in_check_and_validate",)),
    Mutant("a local set is read inside the index's folder only", "crawler/validate/sets.py",
           "tuple(segments[: len(below)]) == below and candidate.joinpath(*segments).is_file()",
           "candidate.joinpath(*segments).is_file()",
           (f"{PLANTED}::test_a_local_index_cannot_make_validate_or_the_audit_read_above_its_folder",),
           (("if self.fallback and self.index.parent.is_relative_to(self.root):", "if False:"),)),
    Mutant("an encoded / in a local set's loc names no file", "crawler/validate/sets.py",
           ' or "/" in segment', "",
           (f"{PLANTED}::test_a_local_index_cannot_make_validate_or_the_audit_read_above_its_folder",),
           (("if path.is_file() and path.resolve().is_relative_to(self.root.resolve()):", "if path.is_file():"),)),
    Mutant("a file left by a user or a run is read without following a symlink", "crawler/regular_file.py",
           "os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK", "os.O_RDONLY | os.O_NONBLOCK",
           (f"{PLANTED}::test_an_earlier_audit_that_is_not_one_is_refused_in_one_line",
            "tests/test_audit.py::test_a_secret_source_that_cannot_be_read_is_one_line_without_the_secret")),
    Mutant("a file left by a user or a run is read when regular only", "crawler/regular_file.py",
           "if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):", "if False:",
           (f"{PLANTED}::test_an_earlier_audit_that_is_not_one_is_refused_in_one_line",
            "tests/test_audit.py::test_a_secret_source_that_cannot_be_read_is_one_line_without_the_secret")),
    Mutant("a file left by a user or a run is read to its limit only", "crawler/regular_file.py",
           "if info.st_size > limit or len(data) > limit:", "if False:",
           ("tests/test_audit.py::test_a_cookie_file_too_big_is_refused_in_one_line",)),
    Mutant("an earlier report's head is read to its limit only", "crawler/regular_file.py",
           "            if head > limit:", "            if False:",
           (f"{PLANTED}::test_an_earlier_audit_that_is_not_one_is_refused_in_one_line",
            "tests/test_audit_scale.py::test_read_until_finds_a_marker_across_a_chunk_boundary")),
    Mutant("--cookie-file: only the staging host's cookies", "settings/secret_sources.py",
           " or not _domain_matches(domain, subdomains, host):", ":",
           ("tests/test_audit.py::test_secrets_from_the_environment_and_a_cookie_file_reach_the_staging_origin",)),
    Mutant("a frontier entry without this crawl's seal is refused", "crawler/distributed/frontier.py",
           'if self.secret is not None and not sealed(self.secret, self.context, raw, fields.get(b"s")):', "if False:",
           (f"{POISON}::test_pace_keys_of_another_type_are_repaired_and_frontier_entries_need_this_crawls_seal",
            f"{POISON}::test_planted_entries_and_items_are_refused_and_the_crawl_ends")),
    Mutant("a pace key of another type is repaired", "crawler/distributed/coordination.py",
           "    redis.call('DEL', KEYS[i])  -- a pace or grants key of another type is not ours", "    -- kept",
           (f"{POISON}::test_pace_keys_of_another_type_are_repaired_and_frontier_entries_need_this_crawls_seal",)),
    Mutant("every Redis call has a deadline", "crawler/distributed/client.py",
           "CALL_SECONDS = 10.0", "CALL_SECONDS = 120.0",
           ("tests/test_distributed_crawl.py::test_a_redis_that_goes_away_ends_the_run_and_keeps_the_previous_set",)),
    Mutant("a robots.txt redirect stays on the origin's port", "crawler/robots_rules.py",
           "    if target_default and origin_default:\n        return True\n    return port == origin_port",
           "    return True", ("tests/test_hostile.py::test_a_robots_txt_redirected_to_another_port_is_not_followed",)),
    Mutant("what a shared crawl seals is bound to its run", "settings/distributed.py",
           'f"run {self.crawl} {self.run}"', 'f"run {self.crawl}"',
           (f"{POISON}::test_each_run_seals_under_its_own_key_and_what_an_earlier_run_sealed_is_refused",)),
    Mutant("a new shared run gets a new run id", "crawler/cli/shared.py",
           'options["SITEMAP_RUN"] = run = secrets.token_hex(8)', 'options["SITEMAP_RUN"] = run = "0" * 16',
           (f"{POISON}::test_each_run_seals_under_its_own_key_and_what_an_earlier_run_sealed_is_refused",)),
    Mutant("a dropped Redis connection is tried again for seconds", "crawler/distributed/client.py",
           "    return ExponentialBackoff(cap=2.0, base=0.5)", "    return ExponentialBackoff(cap=1.0)",
           ("tests/test_distributed_redis.py::test_a_redis_restarted_within_seconds_is_reconnected_to",)),
    Mutant("check cuts a sample its Crawl-delay cannot fetch by the deadline", "crawler/spiders/check.py",
           "        if self.pace.delay <= 0:\n            return wanted", "        return wanted",
           ("tests/test_check.py::test_a_sample_that_cannot_be_fetched_at_the_crawl_delay_by_the_deadline_is_cut",)),
    Mutant("--cookie-file: a host-only cookie is not a subdomain's", "settings/secret_sources.py",
           'subdomains.upper() == "TRUE" and host.endswith', "host.endswith",
           ("tests/test_audit.py::test_a_cookie_file_is_matched_as_a_browser_matches",)),
    Mutant("--cookie-file: a Secure cookie over https only", "settings/secret_sources.py",
           'if only_https.upper() == "TRUE" and not secure:', "if False:",
           ("tests/test_audit.py::test_a_cookie_file_is_matched_as_a_browser_matches",
            "tests/test_audit.py::test_secrets_from_the_environment_and_a_cookie_file_reach_the_staging_origin")),
    Mutant("--subdomains: only hosts of the start URL's registrable domain", "crawler/scope.py",
           "return self._domain is not None and registrable_domain(host) == self._domain",
           "return self._domain is not None",
           (f"{HOSTS}::test_a_host_out_of_scope_and_a_disallowed_path_get_no_request",)),
    Mutant("several hosts: one set per host", "pipelines/export.py",
           "            published = self._write_hosts(pairs, result, now, news, state.relocate)",
           "            published = write_sitemaps((), self.publisher, self.staging, layout, now, news=news,"
           " shards=write_assigned(pairs, self.staging, layout, state.relocate)), 0",
           (f"{HOSTS}::test_each_host_gets_its_own_valid_set_with_exactly_its_pages",)),
    Mutant("several hosts: a queue per host, none held back by another's Crawl-delay", "crawler/schedulers/disk.py",
           "            scheduler.pqclass = DownloaderAwarePriorityQueue", "            pass",
           (f"{HOSTS}::test_the_hosts_are_crawled_at_the_same_time",)),
    Mutant("several hosts: at most --max-hosts", "crawler/spiders/frontier.py",
           "if len(self.hosts) >= self.max_hosts:", "if False:",
           (f"{HOSTS}::test_max_hosts_caps_the_hosts_taken_in",)),
    Mutant("check --expect OUT of several hosts compares with OUT/HOST", "crawler/cli/check.py",
           "            expect = host  # the output", "            pass  # the output",
           (f"{HOSTS}::test_check_and_validate_read_one_hosts_published_set_under_its_own_name",)),
    Mutant("validate reads each host's folder as a set of its own origin", "crawler/validate/sets.py",
           "self._context = replace(self._context, origin=None, seen={})", "pass",
           (f"{HOSTS}::test_validate_reads_each_hosts_set_on_its_own_origin",)),
    Mutant("--publish of several hosts: each host's set under PREFIX/HOST/", "crawler/cli/publishing.py",
           'each = {"": published} if not sets else', 'each = {"": published} if True else',
           ("tests/test_publish_s3.py::test_each_hosts_set_goes_under_a_prefix_of_its_own",)),
    Mutant("--index-host is checked before the crawl", "settings/config.py",
           "    _check_index_host(config)\n", "",
           (f"{INDEX_HOST}::test_a_wrong_index_host_is_one_line_and_exit_2",)),
    Mutant("IndexNow of several hosts: each host's key file on its own host", "crawler/extensions/notify.py",
           "._replace(netloc=netloc)", "._replace()",
           (f"{HOSTS}::test_indexnow_is_told_host_by_host_with_each_hosts_key_file",)),
    Mutant("--resolve holds for the requests outside Scrapy (httpx)", "crawler/services/http.py",
           "addresses = pinned_address(self.pinned, host, port) or (host,)", "addresses = (host,)",
           (f"{HOSTS}::test_the_audit_reaches_a_staging_name_that_only_resolve_knows",
            f"{HOSTS}::test_indexnow_is_told_host_by_host_with_each_hosts_key_file")),
    Mutant("a rendered page may fetch from every host of the crawl", "crawler/render/guard.py",
           "root in self.allowed or self.scope.contains(root)",
           'root in self.allowed or root == self.scope.origin + "/"',
           (f"{HOSTS}::test_a_rendered_crawl_follows_scripts_across_the_hosts",)),
    Mutant("several hosts: --max-pages-per-host is each host's share of the budget", "crawler/spiders/frontier.py",
           "if self.max_pages_per_host and self.host_reserved[host] >= self.max_pages_per_host:", "if False:",
           (f"{HOSTS}::test_max_pages_per_host_keeps_a_big_host_from_taking_the_whole_budget",)),
    Mutant("several hosts: a host whose URLs all left has its set withdrawn", "crawler/sitemaps/hosts.py",
           "            publisher_for(folder).withdraw()\n", "",
           (f"{HOSTS}::test_a_host_whose_urls_all_left_has_its_set_withdrawn_and_an_outage_keeps_it",)),
    Mutant("several hosts: a host whose robots.txt is unreadable keeps its set", "crawler/sitemaps/hosts.py",
           "elif outage := outages.get(origin):", "elif outage := None:",
           (f"{HOSTS}::test_a_host_whose_urls_all_left_has_its_set_withdrawn_and_an_outage_keeps_it",)),
    Mutant("several hosts: --max-shrink guards each host's set", "pipelines/export.py",
           '                return f"{folder}: {why}"\n', "                pass\n",
           (f"{HOSTS}::test_max_shrink_guards_each_hosts_set_on_its_own",)),
    Mutant("several hosts: a host none of whose pages answered keeps its set", "crawler/results.py",
           "for root, c in self.origins.items() if not c.answered}", "for root, c in self.origins.items() if False}",
           (f"{HOSTS}::test_a_host_whose_urls_all_left_has_its_set_withdrawn_and_an_outage_keeps_it",)),
    Mutant("--resolve takes one host name, not curl's * and + forms", "crawler/addresses.py",
           "if not HOST_NAME.fullmatch(ascii_host(host)):", "if False:",
           (f"{HOSTS}::test_a_wrong_host_option_is_one_line_and_exit_2",)),
    Mutant("--host *.SUFFIX over a public suffix is refused", "settings/hosts.py",
           'if name.startswith("*.") and not public_suffix_free(name[2:]):', "if False:",
           (f"{HOSTS}::test_a_wrong_host_option_is_one_line_and_exit_2",)),
    Mutant("a shared crawl of several hosts keeps one pace in Redis per origin",
           "crawler/downloadhandlers/sharedpace.py",
           "        origin = site_root(url)\n", '        origin = "one"\n',
           (f"{SHARED_HOSTS}::test_each_host_has_its_own_pace_in_redis",)),
    Mutant("the exporter of a shared crawl vets pages against the crawl's hosts", "crawler/spiders/export.py",
           "self.config.hosts.scope(self.config.start_url)", "Scope(self.config.start_url)",
           (f"{SHARED_HOSTS}::test_the_coordinator_and_a_worker_give_each_host_its_set",),
           more=(("from crawler.items import PageFacts",
                  "from crawler.scope import Scope\nfrom crawler.items import PageFacts"),)),
    Mutant("each host's page budget is counted for all workers", "crawler/distributed/frontier.py",
           "  if per_host > 0 and count('HINCRBY', KEYS[4], host, 1) > per_host then",
           "  if false then", (f"{SHARED_HOSTS}::test_each_hosts_page_budget_is_counted_for_all_workers",
                               "tests/test_distributed_frontier.py")),
    Mutant("the hosts a shared crawl takes in are counted for all workers", "crawler/distributed/frontier.py",
           "    if redis.call('SCARD', KEYS[5]) >= max_hosts then", "    if false then",
           ("tests/test_distributed_frontier.py",)),
    Mutant("a worker connects where its own --resolve says", "crawler/cli/worker.py",
           '    settings.set("SITEMAP_RESOLVE", [str(rule) for rule in pinned_of(args)], priority="cmdline")\n', "",
           (f"{SHARED_HOSTS}::test_the_coordinator_and_a_worker_give_each_host_its_set",)),
    Mutant("local workers get the coordinator's --resolve", "crawler/cli/shared.py",
           '            command += ["--resolve", str(rule)]\n', "            pass\n",
           ("tests/test_shared_orchestration.py::test_local_workers_connect_where_the_coordinators_resolve_says",)),
    Mutant("--index-host writes one index of every host's sitemaps", "pipelines/export.py",
           "            result.hosts_index, result.hosts_index_missing = index\n",
           "            result.hosts_index, result.hosts_index_missing = None, \"\"\n",
           (f"{INDEX_HOST}::test_the_index_host_lists_every_hosts_files_on_their_own_hosts",)),
    Mutant("the index of every host lists each host's files", "crawler/sitemaps/hosts.py",
           "        entries += [(publisher.base_url + file, meta.get(\"lastmod\")) for file, meta in files]\n",
           "        entries += []\n",
           (f"{INDEX_HOST}::test_the_index_host_lists_every_hosts_files_on_their_own_hosts",)),
    Mutant("the index of every host outlives its host's next publish", "crawler/sitemaps/publish.py",
           "        extras += [name for name in self.kept_extras if name in previous_extras]\n", "",
           ("tests/test_sitemaps.py::test_an_extra_another_step_writes_outlives_the_next_publish_until_it_is_dropped",)),
    Mutant("validate reads an index of every host apart from its host's own set", "crawler/validate/sets.py",
           "            crossed += [path for path in indexes if path.name in hosts_indexes(host)]\n", "",
           (f"{INDEX_HOST}::test_the_index_host_lists_every_hosts_files_on_their_own_hosts",)),
    Mutant("validate finds an entry of the index of every host that no set holds", "crawler/validate/crossed.py",
           "        if item.loc in own[host]:", "        if True:",
           (f"{INDEX_HOST}::test_validate_finds_an_entry_of_the_index_that_no_host_set_holds",)),
    Mutant("check reads another host's sitemaps only when its robots.txt names the index", "crawler/check/cross.py",
           "        proven = [(entry, index) for entry, index in entries if normalize_or_raw(index) in named]\n",
           "        proven = entries\n",
           (f"{INDEX_HOST}::test_check_reads_each_hosts_sitemaps_its_robots_txt_vouches_for",)),
    Mutant("check judges an index's sitemaps on other hosts by their robots.txt, not as errors",
           "crawler/check/plan.py",
           "for finding in held if not self._cross.offered(finding)]", "for finding in held]",
           (f"{INDEX_HOST}::test_check_reads_each_hosts_sitemaps_its_robots_txt_vouches_for",)),
    Mutant("--publish mirrors the index of every host with its host's set", "crawler/sitemaps/hosts.py",
           "        written[index_folder].extras.append(name)  # published with the set (--publish)\n", "",
           ("tests/test_publish_s3.py::test_each_hosts_set_goes_under_a_prefix_of_its_own",)),
    Mutant("a Crawl-delay learnt after a grant counts from that grant (robots.txt's)",
           "crawler/distributed/coordination.py", "next_at = math.max(next_at, last + delay)", "next_at = next_at",
           ("tests/test_distributed_frontier.py::test_a_crawl_delay_learnt_after_a_grant_counts_from_that_grant",)),
    Mutant("validate finds an index listed by the index of every host", "crawler/validate/crossed.py",
           "        if file.is_file() and _INDEX_ROOT.search(read_head(file) or b\"\"):", "        if False:",
           (f"{INDEX_HOST}::test_validate_finds_an_entry_of_the_index_that_no_host_set_holds",)),
    Mutant("check --expect compares another host's file with its own host's folder", "crawler/check/plan.py",
           "expect, base = beside(self.expect, entry.loc), ", "expect, base = None, ",
           (f"{INDEX_HOST}::test_check_reads_each_hosts_sitemaps_its_robots_txt_vouches_for",)),
    Mutant("a host name in another script is taken in its ASCII form", "crawler/addresses.py",
           '        return name.encode("idna").decode("ascii").lower()', "        return name",
           ("tests/test_scope.py::test_a_host_name_in_another_script_is_taken_in_the_form_links_have",)),
    Mutant("the pages of a host out of reach stay listed in the state store", "pipelines/export.py",
           "                state.keep_out_of_reach()\n", "                pass\n",
           (f"{HOSTS}::test_a_host_whose_urls_all_left_has_its_set_withdrawn_and_an_outage_keeps_it",)),
    Mutant("check asks only the checked site's own hosts to vouch for an index's sitemaps", "crawler/check/cross.py",
           "        if self.site.same_site(entry.loc) and (", "        if (",
           (f"{INDEX_HOST}::test_check_reads_each_hosts_sitemaps_its_robots_txt_vouches_for",)),
    Mutant("check follows the redirect of a robots.txt that vouches for an index", "crawler/check/plan.py",
           "        if target := self._cross.redirected(origin, status, headers, fetch.hops):", "        if False:",
           (f"{INDEX_HOST}::test_check_reads_each_hosts_sitemaps_its_robots_txt_vouches_for",)),
    Mutant("the index of every host is never written over a file that is not ours", "crawler/sitemaps/publish.py",
           "        if not self.overwrite_foreign and (clash := self.foreign([name])):", "        if False:",
           (f"{INDEX_HOST}::test_a_file_of_that_name_that_is_not_ours_is_left_alone",)),
    Mutant("--index-host names a host of the crawl", "settings/config.py",
           'if not hosts.scope(config.start_url).contains(f"{start.scheme}://{hosts.index_host}{port}/"):',
           "if False:", (f"{INDEX_HOST}::test_a_wrong_index_host_is_one_line_and_exit_2",)),
    Mutant("an audit sends the staging credentials to every mapped staging host", "settings/staging.py",
           "StagingAccess(hosts.stagings if hosts else (site_root(start_url),), tuple(headers))",
           "StagingAccess((site_root(start_url),), tuple(headers))",
           (f"{AUDIT_HOSTS}::test_each_production_host_gets_its_own_valid_set",)),
    Mutant("a mapped staging host is a host of the crawl", "settings/hosts.py",
           "            names += (parts.hostname,)", "            pass",
           (f"{AUDIT_HOSTS}::test_each_production_host_gets_its_own_valid_set",)),
    Mutant("with a production map, --subdomains and --host are refused", "settings/hosts.py",
           'if staging and (names or settings.getbool("SITEMAP_SUBDOMAINS")):', "if False:",
           (f"{AUDIT_HOSTS}::test_a_wrong_host_map_is_one_line_before_any_request",)),
    Mutant("each host's own sitemap is read as that host's", "crawler/cli/audit.py",
           "by_pair[on[0] if on else pairs[0]].append(source)", "by_pair[pairs[0]].append(source)",
           (f"{AUDIT_HOSTS}::test_each_hosts_own_sitemap_is_compared_on_its_own_host",)),
    Mutant("each mapped host's root is a start of the audit's click depth", "crawler/audit/build.py",
           "hosts.stagings[1:] if hosts else ()", "()",
           (f"{AUDIT_HOSTS}::test_the_report_explains_each_hosts_urls_by_their_production_names",)),
    Mutant("a production map's staging hosts share the start URL's scheme and port", "settings/hosts.py",
           "        if (parts.scheme, parts.port) != (start.scheme, start.port):", "        if False:",
           (f"{AUDIT_HOSTS}::test_a_wrong_host_map_is_one_line_before_any_request",)),
    Mutant("the production map reaches the workers of a shared crawl", "crawler/distributed/config.py",
           '    "SITEMAP_PRODUCTION_URL": "list",', "",
           ("tests/test_hosts_shared.py::test_a_worker_follows_production_names_on_their_staging_hosts",)),
    Mutant("coverage: a crawler's agent from outside its published ranges is spoofed", "crawler/coverage/tally.py",
           "        if not self.ranges.vouches(crawler, request.address):", "        if False:",
           (f"{COVERAGE}::test_verified_fetches_are_counted_exactly_per_url_and_crawler",)),
    Mutant("coverage: only the window's days count", "crawler/coverage/figures.py",
           " WHERE day >= (SELECT since FROM window_start);", ";",
           (f"{COVERAGE}::test_spoofed_malformed_and_old_lines_are_counted_apart",)),
    Mutant("coverage: a line that is not UTF-8 is skipped", "crawler/coverage/reading.py",
           'line = raw.decode("utf-8").rstrip', 'line = raw.decode("utf-8", "replace").rstrip',
           (f"{COVERAGE}::test_spoofed_malformed_and_old_lines_are_counted_apart",)),
    Mutant("coverage: gzip is told by its first bytes", "crawler/coverage/reading.py",
           "    if handle.peek(2)[:2] == _GZIP_MAGIC:", "    if False:",
           ("tests/test_coverage_units.py::test_logs_are_read_plain_gzipped_cut_short_and_with_lines_too_long",)),
    Mutant("coverage: an IPv4 address mapped into IPv6 is the IPv4 one", "crawler/coverage/crawlers.py",
           "            parsed = parsed.ipv4_mapped", "            pass",
           ("tests/test_coverage_units.py::test_a_crawler_is_its_agent_and_counts_only_from_its_ranges",)),
    Mutant("coverage: a ranges refresh keeps a crawler whose source failed", "crawler/coverage/refresh.py",
           "        if not ranges:", "        if False:",
           (f"{COVERAGE}::test_the_ranges_are_refreshed_from_their_sources_and_a_failed_one_is_kept",)),
]  # fmt: skip


def copy_checkout(into: Path) -> None:
    """The checkout as it is (tracked and new files, not the ignored ones) into *into*."""
    command = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    tracked = subprocess.run(command, cwd=ROOT, capture_output=True, check=True).stdout
    for name in tracked.decode().split("\0"):
        if name and (ROOT / name).is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target)


def passes(tests: tuple[str, ...], copy: Path) -> bool:
    # The copy's packages come first on the path (the editable install's finder comes after).
    environment = {**os.environ, "PYTHONPATH": str(copy)}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    try:
        result = subprocess.run(command, cwd=copy, env=environment, capture_output=True, timeout=1200, check=False)
    except subprocess.TimeoutExpired:
        return False  # a mutant that hangs the suite is killed by its timeout
    return result.returncode == 0


def run(mutant: Mutant, copy: Path) -> tuple[bool, float]:
    """(killed, seconds): the tests run in the copy with the mutant in place, then it is undone."""
    path = copy / mutant.path
    original = mutated = path.read_text()
    for old, new in ((mutant.old, mutant.new), *mutant.more):
        if mutated.count(old) != 1:
            raise SystemExit(f"{mutant.path}: the line of {mutant.rule!r} is not there once; update this list")
        mutated = mutated.replace(old, new)
    path.write_text(mutated)
    started = time.monotonic()
    try:
        return not passes(mutant.tests, copy), time.monotonic() - started
    finally:
        path.write_text(original)


def main(chosen: list[int]) -> int:
    survived = 0
    with tempfile.TemporaryDirectory(prefix="sitemap-crawler-mutants-") as folder:
        copy = Path(folder)
        copy_checkout(copy)
        chosen_tests = sorted({test for n, m in enumerate(MUTANTS, 1) if not chosen or n in chosen for test in m.tests})
        if not passes(tuple(chosen_tests), copy):  # a kill must mean the mutant, not a suite already red
            raise SystemExit("the tests fail without any mutant: fix them first")
        print(f"{'#':>2}  {'verdict':<8} {'s':>5}  rule ({'file'})")
        for number, mutant in enumerate(MUTANTS, 1):
            if chosen and number not in chosen:
                continue
            killed, seconds = run(mutant, copy)
            survived += not killed
            verdict = "killed" if killed else "SURVIVED"
            print(f"{number:>2}  {verdict:<8} {seconds:5.0f}  {mutant.rule} ({mutant.path})", flush=True)
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main([int(argument) for argument in sys.argv[1:]]))
