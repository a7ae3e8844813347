# bash completion for spacectl: subcommands, options, and space ids from `spacectl space list`.
# Installed as <prefix>/share/bash-completion/completions/spacectl.

_spacectl_space_ids() {
  # The ids of this owner's spaces; --json gives one document, ids are 12 lowercase hex digits.
  spacectl --json space list 2>/dev/null | grep -o '"id":"[0-9a-f]\{12\}"' | cut -d'"' -f4
}

_spacectl() {
  local cur prev words cword
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  local global_opts="--json --place --state-dir --owner --gatekeeper-image-file --space-image-file --seccomp-space --seccomp-gatekeeper --version --help"
  local top="place space code apply apply-state network grant window-key journal policy escape-test image serve sweep help"

  # The command path so far (words that are not options or option values).
  local path=() i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    case $w in
      --place|--state-dir|--owner|--gatekeeper-image-file|--space-image-file|--seccomp-space|--seccomp-gatekeeper|\
      --name|--image|--memory|--cpus|--disk|--disk-dir|--mode|--domain|--upstream|--header|--format|--output|--only|--binary|--test-gatekeeper-image-file|\
      --repo|--timeout|--as-branch|--registry)
        ((i++)) ;;
      --) break ;;
      -*) ;;
      *) path+=("$w") ;;
    esac
  done

  case $prev in
    --repo) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --state-dir|--output|--binary|--gatekeeper-image-file|--space-image-file|--seccomp-space|--seccomp-gatekeeper|--test-gatekeeper-image-file)
      COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --place) COMPREPLY=($(compgen -W "docker" -- "$cur")); return ;;
    --mode) COMPREPLY=($(compgen -W "allowlist open" -- "$cur")); return ;;
    --format) COMPREPLY=($(compgen -W "text json tap junit sarif html" -- "$cur")); return ;;
    --name|--image|--memory|--cpus|--disk|--disk-dir|--domain|--upstream|--header|--only|--owner|--timeout|--as-branch|--registry) return ;;
  esac

  local cmd=${path[0]-} sub=${path[1]-} opts=""
  case $cmd in
    "") COMPREPLY=($(compgen -W "$top $global_opts" -- "$cur")); return ;;
    place) [ -z "$sub" ] && COMPREPLY=($(compgen -W "check" -- "$cur")); return ;;
    image)
      if [ -z "$sub" ]; then COMPREPLY=($(compgen -W "push" -- "$cur"))
      else COMPREPLY=($(compgen -W "--registry --test-gatekeeper-image-file" -- "$cur")); fi
      return ;;
    help) [ -z "$sub" ] && COMPREPLY=($(compgen -W "space code gatekeeper corridor window place escape-test files json" -- "$cur")); return ;;
    space)
      if [ -z "$sub" ]; then COMPREPLY=($(compgen -W "create list show verify stop start remove exec" -- "$cur")); return; fi
      case $sub in
        create) opts="--name --image --memory --cpus --disk --repo --mode" ;;
        exec) opts="--gatekeeper" ;;
        list) return ;;
      esac
      if [ ${#path[@]} -eq 2 ] && [ "$sub" != create ] && [[ $cur != -* ]]; then
        COMPREPLY=($(compgen -W "$(_spacectl_space_ids)" -- "$cur")); return
      fi ;;
    code)
      if [ -z "$sub" ]; then COMPREPLY=($(compgen -W "in out history files forget" -- "$cur")); return; fi
      case $sub in
        in) opts="--repo --mode --timeout" ;;
        history|out) opts="--timeout" ;;
        files) opts="--repo" ;;
      esac
      if [ ${#path[@]} -eq 2 ] && [ "$sub" != files ] && [[ $cur != -* ]]; then
        COMPREPLY=($(compgen -W "$(_spacectl_space_ids)" -- "$cur")); return
      fi ;;
    network)
      if [ -z "$sub" ]; then COMPREPLY=($(compgen -W "set" -- "$cur")); return; fi
      opts="--mode --domain"
      if [ ${#path[@]} -eq 2 ] && [[ $cur != -* ]]; then COMPREPLY=($(compgen -W "$(_spacectl_space_ids)" -- "$cur")); return; fi ;;
    grant)
      if [ -z "$sub" ]; then COMPREPLY=($(compgen -W "add refresh providers" -- "$cur")); return; fi
      [ "$sub" = add ] && opts="--provider --upstream --header --secret-stdin --secret-env --secret-helper --unsafe-private-upstream"
      case $prev in
        --provider) COMPREPLY=($(compgen -W "anthropic openai google openrouter groq mistral deepseek xai" -- "$cur")); return ;;
        --secret-env) COMPREPLY=($(compgen -e -- "$cur")); return ;;
        --secret-helper) COMPREPLY=($(compgen -c -- "$cur")); return ;;
      esac
      if [ ${#path[@]} -eq 2 ] && [ "$sub" != providers ] && [[ $cur != -* ]]; then
        COMPREPLY=($(compgen -W "$(_spacectl_space_ids)" -- "$cur")); return
      fi ;;
    serve) opts="--socket --listen --token-file --no-sweep --sweep-grace --renew-window" ;;
    sweep) opts="--grace" ;;
    window-key|journal|policy|escape-test|apply|apply-state)
      [ "$cmd" = escape-test ] && opts="--format --output --only --binary --test-gatekeeper-image-file --no-exhaustion"
      [ "$cmd" = apply ] && opts="--as-branch --as-changes --remove-afterwards"
      if [ ${#path[@]} -eq 1 ] && [[ $cur != -* ]]; then COMPREPLY=($(compgen -W "$(_spacectl_space_ids)" -- "$cur")); return; fi ;;
  esac
  COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
}

complete -F _spacectl spacectl
