//! Choosing the compute device. Every backend runs the same model code; only the [`Device`]
//! value differs. Which backends exist depends on the crate's features: `flex` (CPU, also in
//! wasm32), `wgpu` (Vulkan/Metal/DX12 natively, WebGPU in the browser), `vulkan` (wgpu pinned
//! to Vulkan with SPIR-V kernels) and `cuda`.

use std::str::FromStr;

use burn::tensor::Device;

use crate::error::{EngineError, Result};

/// A backend the user can ask for by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// burn-flex on the CPU.
    Cpu,
    /// burn-wgpu on whatever graphics API the machine offers (WebGPU in a browser).
    Wgpu,
    /// burn-wgpu pinned to Vulkan.
    Vulkan,
    /// CUDA on an NVIDIA GPU.
    Cuda,
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

serde_as_text!(BackendKind);

impl FromStr for BackendKind {
    type Err = EngineError;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "cpu" | "flex" => Ok(BackendKind::Cpu),
            "wgpu" | "gpu" | "webgpu" => Ok(BackendKind::Wgpu),
            "vulkan" => Ok(BackendKind::Vulkan),
            "cuda" => Ok(BackendKind::Cuda),
            other => Err(EngineError::Invalid(format!(
                "unknown device '{other}': use cpu, wgpu, vulkan or cuda"
            ))),
        }
    }
}

impl BackendKind {
    /// The name used on the command line and in the UI.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Wgpu => "wgpu",
            BackendKind::Vulkan => "vulkan",
            BackendKind::Cuda => "cuda",
        }
    }

    /// Backends compiled into this build.
    pub fn available() -> Vec<BackendKind> {
        let mut v = Vec::new();
        if cfg!(feature = "flex") {
            v.push(BackendKind::Cpu);
        }
        if cfg!(feature = "wgpu") {
            v.push(BackendKind::Wgpu);
        }
        if cfg!(feature = "vulkan") {
            v.push(BackendKind::Vulkan);
        }
        if cfg!(feature = "cuda") {
            v.push(BackendKind::Cuda);
        }
        v
    }

    /// Creates the device natively. GPU backends are initialised eagerly so that a missing
    /// driver is reported here rather than at the first tensor.
    #[cfg(not(target_family = "wasm"))]
    pub fn device(self) -> Result<Device> {
        let missing = |feature: &str| EngineError::Backend {
            backend: self.name().into(),
            problem: format!("not compiled in; rebuild with the engine feature '{feature}'"),
        };
        match self {
            #[cfg(feature = "flex")]
            BackendKind::Cpu => {
                keep_freed_buffers();
                Ok(Device::flex())
            }
            #[cfg(feature = "wgpu")]
            BackendKind::Wgpu => Device::wgpu_options()
                .init()
                .map_err(|e| self.init_error(e)),
            #[cfg(feature = "vulkan")]
            BackendKind::Vulkan => Device::wgpu_options()
                .graphics_api(burn::tensor::wgpu::WgpuBackend::Vulkan)
                .init()
                .map_err(|e| self.init_error(e)),
            #[cfg(feature = "cuda")]
            BackendKind::Cuda => Ok(Device::cuda(0)),
            #[allow(unreachable_patterns)]
            _ => Err(missing(match self {
                BackendKind::Cpu => "flex",
                BackendKind::Wgpu => "wgpu",
                BackendKind::Vulkan => "vulkan",
                BackendKind::Cuda => "cuda",
            })),
        }
    }

    /// Device `index` of this backend natively: the CPU whatever the index; a GPU backend's
    /// `index`-th discrete GPU, or its default device for index 0 when there is no discrete
    /// one (a software or integrated adapter).
    #[cfg(not(target_family = "wasm"))]
    #[cfg_attr(not(any(feature = "wgpu", feature = "cuda")), allow(unused_variables))]
    pub fn device_at(self, index: usize) -> Result<Device> {
        match self {
            #[cfg(feature = "wgpu")]
            BackendKind::Wgpu | BackendKind::Vulkan if index > 0 => {
                let options = Device::wgpu_options()
                    .device_kind(burn::tensor::DeviceKind::DiscreteGpu(index));
                #[cfg(feature = "vulkan")]
                let options = match self {
                    BackendKind::Vulkan => {
                        options.graphics_api(burn::tensor::wgpu::WgpuBackend::Vulkan)
                    }
                    _ => options,
                };
                options.init().map_err(|e| self.init_error(e))
            }
            #[cfg(feature = "cuda")]
            BackendKind::Cuda => Ok(Device::cuda(index)),
            _ => self.device(),
        }
    }

    /// Creates the device in a browser (or anywhere async): WebGPU must be initialised
    /// asynchronously before any tensor exists.
    pub async fn device_async(self) -> Result<Device> {
        match self {
            #[cfg(feature = "flex")]
            BackendKind::Cpu => Ok(Device::flex()),
            #[cfg(feature = "wgpu")]
            BackendKind::Wgpu => Device::wgpu_options()
                .init_async()
                .await
                .map_err(|e| self.init_error(e)),
            _ => Err(EngineError::Backend {
                backend: self.name().into(),
                problem: "not available in this build".into(),
            }),
        }
    }

    #[allow(dead_code)]
    fn init_error(self, e: impl std::fmt::Display) -> EngineError {
        EngineError::Backend {
            backend: self.name().into(),
            problem: format!("initialisation failed: {e}"),
        }
    }
}

/// The devices of a data-parallel run: `cpu:2` (two replicas on the CPU, each on its own
/// thread), `wgpu:0,1` or `cuda:0,1,2,3` (one replica per GPU, by index). Empty (the default)
/// is one device, the run's `device`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceSet {
    /// One entry per replica: the backend and the device index (always 0 on the CPU).
    pub replicas: Vec<(BackendKind, usize)>,
}

impl std::fmt::Display for DeviceSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Some((kind, _)) = self.replicas.first() else {
            return Ok(());
        };
        if *kind == BackendKind::Cpu {
            return write!(f, "cpu:{}", self.replicas.len());
        }
        let ids: Vec<String> = self.replicas.iter().map(|(_, i)| i.to_string()).collect();
        write!(f, "{kind}:{}", ids.join(","))
    }
}

serde_as_text!(DeviceSet);

impl FromStr for DeviceSet {
    type Err = EngineError;
    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(DeviceSet::default());
        }
        let bad = |why: &str| {
            EngineError::Invalid(format!(
                "devices '{s}': {why} (e.g. cpu:2, wgpu:0,1, cuda:0,1,2,3)"
            ))
        };
        let (kind, list) = s.split_once(':').unwrap_or((s, "1"));
        let kind: BackendKind = kind.parse()?;
        let numbers: Vec<usize> = list
            .split(',')
            .map(|n| {
                n.trim()
                    .parse::<usize>()
                    .map_err(|_| bad("not a number list"))
            })
            .collect::<Result<_>>()?;
        let replicas: Vec<(BackendKind, usize)> = if kind == BackendKind::Cpu {
            match numbers.as_slice() {
                [n] if *n >= 1 => vec![(kind, 0); *n],
                _ => return Err(bad("cpu takes a replica count")),
            }
        } else {
            numbers.iter().map(|&i| (kind, i)).collect()
        };
        let mut seen = std::collections::HashSet::new();
        if kind != BackendKind::Cpu && !numbers.iter().all(|i| seen.insert(*i)) {
            return Err(bad("a device is named twice"));
        }
        Ok(DeviceSet { replicas })
    }
}

impl DeviceSet {
    /// Creates the devices natively (device `i` of a GPU backend is its `i`-th discrete GPU).
    #[cfg(not(target_family = "wasm"))]
    pub fn devices(&self) -> Result<Vec<Device>> {
        self.replicas
            .iter()
            .map(|&(kind, index)| kind.device_at(index))
            .collect()
    }
}

/// Tells glibc's allocator to keep freed memory in the process instead of handing it back to the
/// kernel.
///
/// burn-flex allocates a fresh output buffer for most operations, megabytes each at encoder
/// sizes. By default glibc serves such sizes with `mmap` and unmaps them on `free` (or trims
/// the heap top), so every operation page-faults its output in again and the kernel zeroes each
/// page: 5-8% of `trainer embed`'s time in a profile, and 10-15% in wall time measured with
/// `cargo xtask bench` (BENCHMARKS.md), for about 10% more peak memory. Called by the CPU
/// device's constructor; a no-op elsewhere than Linux with glibc. Safe to call more than once.
pub fn keep_freed_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; it is thread-safe in glibc.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}
