//! Device profiles: which fitted [`TimeModel`] a prediction uses, and why.
//!
//! A profile is a [`TimeModel`] fitted on one GPU. Profiles fitted on the
//! corpus of `docs/recommendation.md` ship with the crate ([`SHIPPED`]);
//! `sparsetool calibrate` fits one for the GPU at hand and stores it in the
//! user's cache directory ([`user_dir`], named by the GPU's UUID).
//! [`resolve`] picks, in this order:
//!
//! 1. the profile asked for (`analyze --profile FILE|NAME`: a file, a
//!    shipped name such as `h200`, or the name of one of the user's own);
//! 2. the user's own profile of the GPU present, matched by UUID;
//! 3. the shipped profile fitted on a GPU of the same name;
//! 4. for any other GPU, the shipped profile closest in measured copy
//!    bandwidth (the bandwidth is measured only then);
//! 5. without a GPU, the shipped default ([`TimeModel::calibrated`], the
//!    H100's).
//!
//! The [`ProfileChoice`] says which profile, fitted on which device, and
//! why; `analyze` prints it beside every prediction.
//!
//! ```
//! use sparsetool_analyze::profile::{resolve, DeviceInfo};
//! // No GPU: the shipped default.
//! let c = resolve(None, None, None, || None).unwrap();
//! assert_eq!(c.profile, "h100");
//! assert!(c.why.contains("no GPU"));
//! // An H100 of another make: the shipped profile closest in bandwidth.
//! let gpu = DeviceInfo { name: "NVIDIA H100 PCIe".into(), uuid: None };
//! let c = resolve(None, Some(&gpu), None, || Some(2900.0)).unwrap();
//! assert!(c.why.contains("closest"), "{}", c.why);
//! // Asked for by name.
//! let c = resolve(Some("h100"), Some(&gpu), None, || None).unwrap();
//! assert_eq!((c.profile.as_str(), c.source.as_str()), ("h100", "shipped"));
//! ```

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Serialize;

use crate::timing::TimeModel;
use crate::AnalyzeError;

/// The profiles shipped with the crate: `(name, JSON)`, the first being the
/// default ([`TimeModel::calibrated`]).
pub const SHIPPED: [(&str, &str); 2] = [
    ("h100", crate::timing::CALIBRATION_JSON),
    ("h200", include_str!("../calibration/h200.json")),
];

/// The shipped profiles, parsed once, each named by its [`SHIPPED`] key.
///
/// # Panics
/// Never for the shipped files (a unit test parses them).
#[must_use]
pub fn shipped() -> &'static [TimeModel] {
    static ALL: OnceLock<Vec<TimeModel>> = OnceLock::new();
    ALL.get_or_init(|| {
        SHIPPED
            .iter()
            .map(|(name, json)| {
                let mut m: TimeModel =
                    serde_json::from_str(json).expect("a shipped profile parses");
                m.name = Some((*name).to_string());
                m
            })
            .collect()
    })
}

/// The choice without a GPU and without `--profile`: the shipped default.
#[must_use]
pub fn default_choice() -> ProfileChoice {
    ProfileChoice::new(
        shipped()[0].clone(),
        "shipped",
        None,
        None,
        "no GPU here: predicting for the shipped default".into(),
    )
}

/// The GPU a prediction is for, as the driver names it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeviceInfo {
    /// Device name, e.g. `NVIDIA H200`.
    pub name: String,
    /// UUID (`GPU-…`), when the driver gave one.
    pub uuid: Option<String>,
}

/// The profile chosen for a prediction and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileChoice {
    /// The fitted constants.
    #[serde(skip)]
    pub model: TimeModel,
    /// The profile's name ([`TimeModel::label`]).
    pub profile: String,
    /// `shipped`, `yours` (the user's cache directory) or `file`.
    pub source: String,
    /// Where the profile was read from (a file), if not shipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The GPU the profile was fitted on.
    pub fitted_device: String,
    /// The GPU present, if any.
    pub device: Option<String>,
    /// Why this profile, in a few words.
    pub why: String,
}

impl ProfileChoice {
    fn new(
        model: TimeModel,
        source: &str,
        path: Option<&Path>,
        device: Option<&DeviceInfo>,
        why: String,
    ) -> Self {
        Self {
            profile: model.label().to_string(),
            source: source.to_string(),
            path: path.map(|p| p.display().to_string()),
            fitted_device: model.device.clone(),
            device: device.map(|d| d.name.clone()),
            why,
            model,
        }
    }

    /// One line for people: `profile h200 (shipped, fitted on NVIDIA H200):
    /// matched by device name`.
    #[must_use]
    pub fn sentence(&self) -> String {
        let from = self
            .path
            .as_ref()
            .map_or(self.source.clone(), |p| format!("{}: {p}", self.source));
        format!(
            "profile {} ({from}, fitted on {}): {}",
            self.profile, self.fitted_device, self.why
        )
    }
}

/// The directory of the user's own profiles: `$XDG_CACHE_HOME/sparsetool/
/// profiles`, else `$HOME/.cache/sparsetool/profiles` (the XDG base
/// directory rule, four lines: not worth a dependency); `None` without
/// either variable.
#[must_use]
pub fn user_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|h| h.is_absolute())
                .map(|h| h.join(".cache"))
        })?;
    Some(base.join("sparsetool").join("profiles"))
}

/// Where `sparsetool calibrate` stores the profile of the GPU with this
/// UUID, in `dir` ([`user_dir`]).
#[must_use]
pub fn user_path(dir: &Path, uuid: &str) -> PathBuf {
    let safe: String = uuid
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{safe}.json"))
}

/// Reads and checks a profile file ([`TimeModel::validate`]).
///
/// # Errors
/// [`AnalyzeError::Profile`] naming the file: unreadable, not a profile,
/// or constants missing or invalid.
pub fn load(path: &Path) -> Result<TimeModel, AnalyzeError> {
    let bad = |message: String| AnalyzeError::Profile {
        path: path.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read: {e}")))?;
    let m: TimeModel =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a device profile: {e}")))?;
    m.validate().map_err(bad)?;
    Ok(m)
}

/// The user's profiles in `dir` that parse (others are ignored: a profile
/// that does not load is reported only when asked for by path).
fn user_profiles(dir: &Path) -> Vec<(PathBuf, TimeModel)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<(PathBuf, TimeModel)> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|p| load(&p).ok().map(|m| (p, m)))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// Picks the profile (see the module docs). `explicit` is `--profile`;
/// `device` the GPU present; `dir` the user's profiles ([`user_dir`]);
/// `bandwidth` measures the GPU's copy bandwidth (GB/s) and is called only
/// for a GPU without a profile of its own.
///
/// # Errors
/// [`AnalyzeError::Profile`]: `explicit` is neither a shipped name, nor one
/// of the user's, nor a file that holds a valid profile.
pub fn resolve(
    explicit: Option<&str>,
    device: Option<&DeviceInfo>,
    dir: Option<&Path>,
    bandwidth: impl FnOnce() -> Option<f64>,
) -> Result<ProfileChoice, AnalyzeError> {
    let ship = shipped();
    let mine = dir.map(user_profiles).unwrap_or_default();
    // an explicit profile of another GPU says so
    let asked = |m: &TimeModel| match device {
        Some(d) if d.name != m.device => format!("asked for (--profile); this GPU is {}", d.name),
        _ => "asked for (--profile)".to_string(),
    };
    if let Some(want) = explicit {
        let named = |m: &TimeModel| m.name.as_deref() == Some(want);
        let yours: Vec<&(PathBuf, TimeModel)> = mine.iter().filter(|(_, m)| named(m)).collect();
        if yours.len() > 1 {
            let files: Vec<String> = yours.iter().map(|(p, _)| p.display().to_string()).collect();
            return Err(AnalyzeError::Profile {
                path: want.to_string(),
                message: format!(
                    "{} of your profiles have this name ({}): give the file instead",
                    yours.len(),
                    files.join(", ")
                ),
            });
        }
        let found = match ship.iter().find(|m| named(m)) {
            Some(m) => Some((m, "shipped", None)),
            None => yours.first().map(|(p, m)| (m, "yours", Some(p.as_path()))),
        };
        if let Some((m, source, path)) = found {
            return Ok(ProfileChoice::new(
                m.clone(),
                source,
                path,
                device,
                asked(m),
            ));
        }
        let p = Path::new(want);
        if p.exists() || want.contains('/') || want.ends_with(".json") {
            let m = load(p)?;
            let why = asked(&m);
            return Ok(ProfileChoice::new(m, "file", Some(p), device, why));
        }
        let names: Vec<&str> = ship
            .iter()
            .chain(mine.iter().map(|(_, m)| m))
            .filter_map(|m| m.name.as_deref())
            .collect();
        return Err(AnalyzeError::Profile {
            path: want.to_string(),
            message: format!(
                "no such file, and no profile of that name (known: {})",
                names.join(", ")
            ),
        });
    }
    let Some(dev) = device else {
        return Ok(default_choice());
    };
    let choice = by_device(dev, ship, &mine, bandwidth);
    // a profile of this GPU that does not load is not passed over in silence
    let broken = match (&dev.uuid, dir) {
        (Some(uuid), Some(d)) if choice.source != "yours" => {
            let p = user_path(d, uuid);
            match p.exists().then(|| load(&p)) {
                Some(Err(e)) => Some(e.to_string()),
                _ => None,
            }
        }
        _ => None,
    };
    Ok(match broken {
        Some(e) => ProfileChoice {
            why: format!(
                "{}; your profile of this GPU is not used: {e} (run sparsetool calibrate again)",
                choice.why
            ),
            ..choice
        },
        None => choice,
    })
}

/// [`resolve`] for the GPU `dev` without `--profile`.
fn by_device(
    dev: &DeviceInfo,
    ship: &[TimeModel],
    mine: &[(PathBuf, TimeModel)],
    bandwidth: impl FnOnce() -> Option<f64>,
) -> ProfileChoice {
    let device = Some(dev);
    if let Some(uuid) = &dev.uuid {
        if let Some((p, m)) = mine.iter().find(|(_, m)| m.uuid.as_ref() == Some(uuid)) {
            return ProfileChoice::new(
                m.clone(),
                "yours",
                Some(p),
                device,
                format!("fitted on this GPU ({uuid}) by sparsetool calibrate"),
            );
        }
    }
    if let Some(m) = ship.iter().find(|m| m.device == dev.name) {
        return ProfileChoice::new(
            m.clone(),
            "shipped",
            None,
            device,
            "matched by device name".into(),
        );
    }
    let measured = bandwidth().filter(|g| g.is_finite() && *g > 0.0);
    let closest = measured.and_then(|g| {
        ship.iter()
            .filter_map(|m| m.copy_gbps.map(|b| ((b / g).ln().abs(), b, m)))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, b, m)| (g, b, m))
    });
    match closest {
        Some((g, b, m)) => ProfileChoice::new(
            m.clone(),
            "shipped",
            None,
            device,
            format!(
                "no profile for this GPU; the shipped one closest in copy bandwidth ({g:.0} GB/s here, {b:.0} GB/s there); `sparsetool calibrate` fits one for it"
            ),
        ),
        None => ProfileChoice::new(
            ship[0].clone(),
            "shipped",
            None,
            device,
            "no profile for this GPU (bandwidth not measured): the shipped default; `sparsetool calibrate` fits one for it".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(name: &str, uuid: Option<&str>) -> DeviceInfo {
        DeviceInfo {
            name: name.into(),
            uuid: uuid.map(str::to_string),
        }
    }

    #[test]
    fn every_shipped_profile_is_valid_and_knows_its_bandwidth() {
        for m in shipped() {
            m.validate().unwrap();
            assert!(m.name.is_some());
            assert!(m.copy_gbps.is_some_and(|g| g > 100.0), "{}", m.label());
        }
        assert_eq!(shipped()[0].models, TimeModel::calibrated().models);
    }

    #[test]
    fn the_order_of_choice() {
        let d = tempfile::tempdir().unwrap();
        // a user's profile for one GPU, named "lab"
        let mut mine = shipped()[0].clone();
        mine.name = Some("lab".into());
        mine.uuid = Some("GPU-1234".into());
        mine.device = "NVIDIA L40S".into();
        mine.models.get_mut("csr").unwrap()[0] = 9.0;
        let p = user_path(d.path(), "GPU-1234");
        std::fs::write(&p, serde_json::to_string(&mine).unwrap()).unwrap();
        // junk in the directory is ignored
        std::fs::write(d.path().join("junk.json"), "{").unwrap();
        let never = || -> Option<f64> { panic!("bandwidth measured needlessly") };

        let l40 = dev("NVIDIA L40S", Some("GPU-1234"));
        let c = resolve(None, Some(&l40), Some(d.path()), never).unwrap();
        assert_eq!((c.profile.as_str(), c.source.as_str()), ("lab", "yours"));
        assert_eq!(c.model.models["csr"][0], 9.0);
        assert!(
            c.sentence().contains("fitted on this GPU (GPU-1234)"),
            "{}",
            c.sentence()
        );

        let h100 = dev(&shipped()[0].device, Some("GPU-other"));
        let c = resolve(None, Some(&h100), Some(d.path()), never).unwrap();
        assert_eq!(
            (c.profile.as_str(), c.why.as_str()),
            ("h100", "matched by device name")
        );

        // explicit wins, by name (shipped or yours) or by file
        let c = resolve(Some("lab"), Some(&h100), Some(d.path()), never).unwrap();
        assert_eq!(c.profile, "lab");
        let c = resolve(Some(p.to_str().unwrap()), None, None, never).unwrap();
        assert_eq!((c.source.as_str(), c.profile.as_str()), ("file", "lab"));
        let e = resolve(Some("h300"), None, Some(d.path()), never).unwrap_err();
        assert!(e.to_string().contains("known: h100, h200, lab"), "{e}");
        // another GPU's profile, asked for: the sentence names both GPUs
        let c = resolve(Some("h200"), Some(&h100), None, never).unwrap();
        assert_eq!(c.profile, "h200");
        assert!(
            c.why.ends_with("this GPU is NVIDIA H100 80GB HBM3"),
            "{}",
            c.why
        );
        let h200 = dev("NVIDIA H200", None);
        let c = resolve(None, Some(&h200), None, never).unwrap();
        assert_eq!((c.profile.as_str(), c.source.as_str()), ("h200", "shipped"));
        let e = resolve(
            Some(d.path().join("junk.json").to_str().unwrap()),
            None,
            None,
            never,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("junk.json: not a device profile"),
            "{e}"
        );

        // two of yours with one name: an error naming both files
        let mut twin = mine.clone();
        twin.uuid = Some("GPU-5678".into());
        std::fs::write(
            user_path(d.path(), "GPU-5678"),
            serde_json::to_string(&twin).unwrap(),
        )
        .unwrap();
        let e = resolve(Some("lab"), None, Some(d.path()), never).unwrap_err();
        assert!(
            e.to_string().contains("2 of your profiles have this name"),
            "{e}"
        );
        // a name with a dot is still a name, not a file that cannot be read
        let e = resolve(Some("lab.v2"), None, Some(d.path()), never).unwrap_err();
        assert!(e.to_string().contains("no profile of that name"), "{e}");
        // your profile of this GPU that does not load is named, not skipped
        // in silence (here: the schema of seven constants before `scrambled`)
        let mut old: serde_json::Value = serde_json::to_value(&mine).unwrap();
        old["uuid"] = "GPU-9999".into();
        old["models"]["csr"] = serde_json::json!([1.0, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0]);
        std::fs::write(user_path(d.path(), "GPU-9999"), old.to_string()).unwrap();
        let h100_mine = dev(&shipped()[0].device, Some("GPU-9999"));
        let c = resolve(None, Some(&h100_mine), Some(d.path()), never).unwrap();
        assert_eq!(c.profile, "h100");
        assert!(
            c.why
                .starts_with("matched by device name; your profile of this GPU is not used: ")
                && c.why.contains("GPU-9999.json"),
            "{}",
            c.why
        );

        // another GPU: measured, and the closest shipped profile chosen
        let rtx = dev("NVIDIA GeForce RTX 4090", None);
        let c = resolve(None, Some(&rtx), Some(d.path()), || Some(900.0)).unwrap();
        assert_eq!((c.source.as_str(), c.profile.as_str()), ("shipped", "h100"));
        assert!(c.why.contains("900 GB/s here"), "{}", c.why);
        // a faster GPU than any shipped: the fastest shipped profile
        let b200 = dev("NVIDIA B200", None);
        let c = resolve(None, Some(&b200), None, || Some(7000.0)).unwrap();
        assert_eq!(c.profile, "h200");
        let c = resolve(None, Some(&rtx), None, || None).unwrap();
        assert!(c.why.contains("bandwidth not measured"), "{}", c.why);
        assert_eq!(c.device.as_deref(), Some("NVIDIA GeForce RTX 4090"));
    }

    #[test]
    fn invalid_profiles_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("p.json");
        // a format without constants is refused, and neither cuSPARSE's
        // sliced ELL (it runs only sell-32-1) nor CSR's row-per-sub-warp
        // kernels (they do not stand for the load-balanced ones) stand in
        // for their format
        for (format, stand_in) in [
            ("jds", None),
            ("sell", Some("cusparse-sell")),
            ("csr", Some("csr-vector")),
        ] {
            let mut m = shipped()[0].clone();
            m.models.remove(format);
            assert!(stand_in.is_none_or(|k| m.models.contains_key(k)));
            std::fs::write(&p, serde_json::to_string(&m).unwrap()).unwrap();
            let e = load(&p).unwrap_err().to_string();
            assert!(
                e.contains("p.json") && e.contains(&format!("no constants for {format}")),
                "{e}"
            );
        }
        let mut m = shipped()[0].clone();
        m.models.get_mut("csr").unwrap()[1] = -1.0;
        std::fs::write(&p, serde_json::to_string(&m).unwrap()).unwrap();
        assert!(load(&p).unwrap_err().to_string().contains("non-negative"));
    }

    #[test]
    fn user_dir_follows_xdg() {
        // only reads the environment; the variables are not changed here
        // (tests run in parallel), so check the shape of the answer
        if let Some(d) = user_dir() {
            assert!(d.ends_with("sparsetool/profiles"), "{}", d.display());
        }
        assert_eq!(
            user_path(Path::new("/c"), "GPU-ab/c"),
            PathBuf::from("/c/GPU-ab_c.json")
        );
    }
}
