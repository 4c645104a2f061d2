"""``energy``: the energy and CO2 of the run's own compute, plus an estimate for the generation.

Per sample (the record's score, in Wh)::

    compute_wh    = cpu_s * cpu_watts / logical_cpus / 3600
    generation_wh = tokens_in / 1000 * wh_per_1k_input + tokens_out / 1000 * wh_per_1k_output
    co2_g         = (compute_wh + generation_wh) / 1000 * carbon_intensity_g_per_kwh

``cpu_s`` is what the sample cost this machine's CPUs: the CPU time of its test execution (the
sandboxed process tree, as the sandbox counted it, with the build where the language reports it
apart) plus the CPU time the evaluating thread spent on the sample (every criterion before this
one: the criterion runs last). ``cpu_watts`` is codecarbon's figure for this CPU at full load
(its table of CPU models, else 4 W a thread), or ``energy.cpu_watts`` from ``benchwright.yaml``;
shared by the logical CPUs, as codecarbon's own CPU-load model shares it. The generation part
is an estimate from the provider's tokens and a per-model figure the user gives under
``energy.models`` (no figure: that part is ``n/a`` and says how to add one; the compute part is
still recorded). The carbon intensity is codecarbon's bundled figure for ``energy.country``
(and ``energy.region``), ``energy.carbon_intensity`` when set, else the world average.

Per run (``summary.yaml``'s ``energy``): codecarbon's offline tracker measures the whole
machine while the samples run (RAPL where the kernel offers it, else its CPU-load model and a
RAM power estimate), with nothing sent anywhere; beside it, the CPU time of benchwright and
every process it waited for, turned into Wh the per-sample way, and the samples' totals.

codecarbon is imported only when this criterion runs (it is slow to import).
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import logging
import resource
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType, TracebackType
from typing import Any

from benchwright.config.settings import EnergySettings, Settings
from benchwright.criteria.base import Criterion, Measurement, SampleContext
from benchwright.results.record import Generation, Record

__all__ = ["CRITERIA", "Energy", "Grid", "PowerModel", "RunMeter", "grid", "power_model",
           "run_meter"]

INSTALL = "pip install 'benchwright[energy]'"
"""How to install what the criterion needs."""
FIX = "add it under energy.models in benchwright.yaml (see docs/criteria.md#energy)"
"""What a model without an energy figure needs."""

_lock = threading.Lock()


def _codecarbon() -> ModuleType:
    """codecarbon, imported once, its logger kept to errors (it warns about unknown CPUs and
    missing RAPL files, which is expected here and said in the records)."""
    with _lock:
        logging.getLogger("codecarbon").setLevel(logging.ERROR)
        import codecarbon

        return codecarbon


def codecarbon_version() -> str | None:
    """The installed codecarbon's version, or None."""
    try:
        return importlib.metadata.version("codecarbon")
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class PowerModel:
    """What a CPU second costs on this machine."""

    cpu_watts: float
    """The whole CPU at full load (every socket and core)."""
    logical_cpus: int
    source: str
    """Where ``cpu_watts`` comes from."""

    @property
    def watts_per_cpu(self) -> float:
        """One logical CPU busy for a second uses this many joules."""
        return self.cpu_watts / max(self.logical_cpus, 1)

    def wh(self, cpu_s: float) -> float:
        """Wh of ``cpu_s`` CPU seconds."""
        return cpu_s * self.watts_per_cpu / 3600.0


@functools.cache
def power_model(cpu_watts: float | None = None) -> PowerModel:
    """codecarbon's figure for this CPU (``cpu_watts``, from the settings, wins): the power at
    full load of its model in codecarbon's table times the sockets, else 4 W a logical CPU,
    else codecarbon's constant; as codecarbon's own CPU-load model takes it."""
    _codecarbon()
    from codecarbon.core import cpu as cc_cpu
    from codecarbon.core.hardware_cache import get_cached_tdp
    from codecarbon.core.util import count_cpus, count_physical_cpus
    from codecarbon.external.hardware import POWER_CONSTANT

    logical = int(count_cpus() or 1)
    if cpu_watts is not None:
        return PowerModel(cpu_watts, logical, "energy.cpu_watts in benchwright.yaml")
    tdp = get_cached_tdp(cc_cpu)  # type: ignore[no-untyped-call]
    model = str(tdp.model or "unknown CPU")
    if tdp.tdp:
        sockets = int(count_physical_cpus() or 1)  # type: ignore[no-untyped-call]
        known = tdp._get_cpu_power_from_registry(model) is not None
        how = (f"codecarbon's CPU table: {model}, {tdp.tdp:g} W" if known
               else f"codecarbon's default for a CPU not in its table ({model}): 4 W a logical CPU")
        if sockets > 1:
            how += f", {sockets} sockets"
        return PowerModel(float(tdp.tdp) * sockets, logical, how)
    return PowerModel(float(POWER_CONSTANT), logical,
                      f"codecarbon's constant for an unknown CPU ({POWER_CONSTANT} W)")


@dataclass(frozen=True)
class Grid:
    """The carbon intensity of the electricity the run uses."""

    g_per_kwh: float
    country: str | None
    region: str | None
    source: str


@functools.cache
def grid(country: str | None, region: str | None, forced: float | None) -> Grid:
    """The carbon intensity (gCO2e/kWh): ``forced`` (``energy.carbon_intensity``), else
    codecarbon's bundled figure for the country (its region's for a US state or Canadian
    province), else codecarbon's world average."""
    if forced is not None:
        return Grid(forced, country, region, "energy.carbon_intensity in benchwright.yaml")
    _codecarbon()
    from codecarbon.core.emissions import Emissions
    from codecarbon.core.units import Energy as CCEnergy
    from codecarbon.external.geography import GeoMetadata
    from codecarbon.input import DataSource

    data = DataSource()  # type: ignore[no-untyped-call]
    if country is None:
        world = float(data.get_carbon_intensity_per_source_data()["world_average"])
        return Grid(world, None, None, "codecarbon's world average (no energy.country)")
    mix = data.get_global_energy_mix_data().get(country, {})
    name = mix.get("country_name", country)
    geo = GeoMetadata(country_iso_code=country, country_name=name, region=region)
    one = CCEnergy(kWh=1.0)
    if region is not None:
        kg = Emissions(data).get_region_emissions(one, geo)
        return Grid(kg * 1000.0, country, region, f"codecarbon's data for {region}, {name}")
    kg = Emissions(data).get_country_emissions(one, geo)
    year = mix.get("year")
    return Grid(kg * 1000.0, country, None,
                f"codecarbon's data for {name}" + (f" ({year})" if year else ""))


def _grid(settings: EnergySettings) -> Grid:
    return grid(settings.country, settings.region, settings.carbon_intensity)


def generation_wh(gen: Generation, settings: EnergySettings) -> tuple[float | None, dict[str, Any]]:
    """The generation's estimated Wh (None: no figure or no tokens) and how it was reached."""
    found = settings.figure(gen.model)
    if found is None:
        return None, {"generation_missing": f"no energy figure for {gen.model}: {FIX}"}
    key, figure = found
    if gen.tokens_in is None and gen.tokens_out is None:
        return None, {"generation_missing": "the provider reported no token counts",
                      "figure": key}
    rate_in, rate_out = figure.rates()
    wh = (gen.tokens_in or 0) / 1000.0 * rate_in + (gen.tokens_out or 0) / 1000.0 * rate_out
    return wh, {"figure": key, "wh_per_1k_input": rate_in, "wh_per_1k_output": rate_out,
                "tokens_in": gen.tokens_in, "tokens_out": gen.tokens_out,
                "tokens_estimated": gen.tokens_estimated}


def _fmt(value: float) -> str:
    return f"{value:.3g}"


class Energy(Criterion):
    """Wh of the sample: its measured compute on this machine plus the generation's estimate;
    gCO2e beside it."""

    name = "energy"
    unit = "Wh"
    higher_is_better = False
    tool = "codecarbon (offline)"
    evaluated_last = True

    def missing(self) -> str | None:
        if importlib.util.find_spec("codecarbon") is None:
            return f"codecarbon is not installed: {INSTALL}"
        return None

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        settings = ctx.settings.energy if ctx.settings is not None else EnergySettings()
        power = power_model(settings.cpu_watts)
        where = _grid(settings)
        harness_s = max(time.thread_time() - ctx.cpu_start_s, 0.0)
        tests_s = 0.0
        result = ctx.executed
        if result is not None:
            if result.process is not None:
                tests_s += result.process.cpu_ms / 1000.0
            build = result.extra.get("build_cpu_ms")
            if isinstance(build, int | float):
                tests_s += float(build) / 1000.0
        compute = power.wh(harness_s + tests_s)
        gen_wh, gen_details = generation_wh(ctx.generation, settings)
        total = compute + (gen_wh or 0.0)
        co2 = total / 1000.0 * where.g_per_kwh
        text = (f"{_fmt(total)} Wh, {_fmt(co2)} gCO2e: compute {_fmt(compute)} Wh "
                f"({_fmt((harness_s + tests_s) * 1000)} ms CPU at {_fmt(power.watts_per_cpu)} W)")
        if gen_wh is not None:
            text += f" + generation {_fmt(gen_wh)} Wh (estimated)"
        else:
            text += f"; generation n/a: {gen_details['generation_missing']}"
        details: dict[str, Any] = {
            "compute_wh": compute, "generation_wh": gen_wh, "co2_g": co2,
            "compute_co2_g": compute / 1000.0 * where.g_per_kwh,
            "generation_co2_g": gen_wh / 1000.0 * where.g_per_kwh if gen_wh is not None else None,
            "cpu_ms": (harness_s + tests_s) * 1000, "tests_cpu_ms": tests_s * 1000,
            "harness_cpu_ms": harness_s * 1000,
            "cpu_watts": power.cpu_watts, "watts_per_cpu": power.watts_per_cpu,
            "logical_cpus": power.logical_cpus, "cpu_watts_source": power.source,
            "country": where.country, "region": where.region,
            "carbon_intensity_g_per_kwh": where.g_per_kwh, "carbon_intensity_source": where.source,
            "cached": ctx.generation.cached,
            "method": "compute: CPU time x per-CPU power (measured time, codecarbon's power "
                      "figure); generation: tokens x the model's figure (estimate)",
            **gen_details,
        }
        return [Measurement(score=total, unit=self.unit, output=text, details=details)]


def _process_cpu_s() -> float:
    """CPU seconds of this process and every child process it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class RunMeter:
    """The run's own energy, measured around the samples' evaluation (a context manager).

    Does nothing when the run does not include ``energy``. codecarbon failing never stops the
    run: the summary then says why there is no measurement.
    """

    def __init__(self, settings: EnergySettings | None) -> None:
        """``settings``: the workspace's ``energy:`` (None: the run has no energy criterion)."""
        self.settings = settings
        self.error: str | None = None
        self._tracker: Any = None
        self._start = 0.0
        self._cpu0 = 0.0
        self._measured: dict[str, Any] | None = None

    @property
    def enabled(self) -> bool:
        return self.settings is not None

    def __enter__(self) -> RunMeter:
        if self.settings is None:
            return self
        try:
            _codecarbon()
            from codecarbon import OfflineEmissionsTracker

            where = _grid(self.settings)
            self._tracker = OfflineEmissionsTracker(
                country_iso_code=self.settings.country, region=self.settings.region,
                force_carbon_intensity_g_co2e_kwh=where.g_per_kwh,
                force_cpu_power=self.settings.cpu_watts, tracking_mode="machine",
                project_name="benchwright", log_level="error", output_methods=[],
                emissions_endpoint=None, electricitymaps_api_token=None, allow_multiple_runs=True)
            self._tracker.start()
        except Exception as e:  # a measuring tool must not stop the run
            self.error = f"codecarbon could not start: {type(e).__name__}: {e}"
            self._tracker = None
        # after the tracker's start (its hardware detection), so that this is the run's work
        self._start, self._cpu0 = time.perf_counter(), _process_cpu_s()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.settings is None:
            return
        duration = time.perf_counter() - self._start
        cpu_s = max(_process_cpu_s() - self._cpu0, 0.0)
        measured: dict[str, Any] = {"duration_s": duration, "process_cpu_s": cpu_s}
        tracker, self._tracker = self._tracker, None
        if tracker is not None:
            try:
                tracker.stop()
                data = tracker.final_emissions_data
                conf = getattr(tracker, "_conf", {}) or {}
                measured.update({
                    "wh": float(data.energy_consumed) * 1000.0,
                    "cpu_wh": float(data.cpu_energy) * 1000.0,
                    "ram_wh": float(data.ram_energy) * 1000.0,
                    "gpu_wh": float(data.gpu_energy) * 1000.0,
                    "cpu_model": data.cpu_model,
                    "hardware": [str(h) for h in conf.get("hardware") or []],
                })
            except Exception as e:
                self.error = f"codecarbon could not measure: {type(e).__name__}: {e}"
        self._measured = measured

    def summary(self, records: Iterable[Record]) -> dict[str, Any] | None:
        """``summary.yaml``'s ``energy``: the measurement, and the samples' totals from the
        ``energy`` records of ``records``; None when the run has no energy criterion."""
        if self.settings is None or self._measured is None:
            return None
        m = dict(self._measured)
        power = power_model(self.settings.cpu_watts)
        where = _grid(self.settings)
        intensity = where.g_per_kwh
        out: dict[str, Any] = {
            "method": (f"codecarbon {codecarbon_version()} offline tracker, whole machine, "
                       "during the samples' evaluation; this invocation only (a resumed run "
                       "counts what it did)"),
            "duration_s": m["duration_s"],
        }
        if "wh" in m:
            out.update({"wh": m["wh"], "co2_g": m["wh"] / 1000.0 * intensity,
                        "cpu_wh": m["cpu_wh"], "ram_wh": m["ram_wh"], "gpu_wh": m["gpu_wh"],
                        "hardware": m["hardware"], "cpu_model": m["cpu_model"]})
        else:
            out.update({"wh": None, "co2_g": None, "error": self.error or "no measurement"})
        out.update({
            "process_cpu_s": m["process_cpu_s"],
            "process_wh": power.wh(m["process_cpu_s"]),
            "country": where.country, "region": where.region,
            "carbon_intensity_g_per_kwh": intensity, "carbon_intensity_source": where.source,
            "cpu_watts": power.cpu_watts, "watts_per_cpu": power.watts_per_cpu,
            "cpu_watts_source": power.source,
        })
        n = 0
        compute = generation = co2 = 0.0
        without = 0
        for r in records:
            if r.criterion != "energy" or r.score is None or r.test_case is not None:
                continue
            d = r.details or {}
            n += 1
            compute += float(d.get("compute_wh") or 0.0)
            co2 += float(d.get("co2_g") or 0.0)
            if d.get("generation_wh") is None:
                without += 1
            else:
                generation += float(d["generation_wh"])
        out["samples"] = {"n": n, "compute_wh": compute, "generation_wh": generation,
                          "without_generation_figure": without, "co2_g": co2}
        return out


def run_meter(criteria: Iterable[str], settings: Settings) -> RunMeter:
    """The meter of a run whose criteria are ``criteria`` (it measures only when ``energy`` is
    one of them and codecarbon is installed)."""
    on = "energy" in criteria and importlib.util.find_spec("codecarbon") is not None
    return RunMeter(settings.energy if on else None)


CRITERIA: tuple[type[Criterion], ...] = (Energy,)
"""The criteria of this module, registered by :mod:`benchwright.builtins`."""
